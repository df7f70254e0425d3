/**
 * HTTP transport for CFS: axios with a connect timeout, a total timeout per attempt, bounded retries and
 * cancellation. It knows nothing about CFS resources; it turns every outcome into a body or a CfsError.
 */
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import axios, { AxiosError, type AxiosInstance, type AxiosRequestConfig } from 'axios';
import axiosRetry, { exponentialDelay } from 'axios-retry';
import { getLogger } from '../logger';
import { CfsError } from './errors';

const log = getLogger('cfs.transport');

export interface RequestInfo {
  method: string;
  route: string;
  status: string;
  durationMs: number;
}

export interface TransportOptions {
  baseUrl: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  retryBudgetMs: number;
  caCertPath?: string;
  tokenFile?: string;
  maxResponseBytes: number;
  onRequest?: (r: RequestInfo) => void;
}

export interface CallSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path below the base URL, already encoded, e.g. `/sessions/batcher-1`. */
  path: string;
  /** Route template for metrics and spans, e.g. `/v3/sessions/{session_name}`. */
  route: string;
  params?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

/** Errors raised while connecting: the request never left this process, so even a POST may be repeated. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNTIMEOUT',
]);
const CONNECT_TIMEOUT_CODE = 'ECONNTIMEOUT';
const MAX_RETRY_DELAY_MS = 5000;

interface RetryMeta {
  startedAt: number;
  route: string;
  attemptStartedAt: number;
  /** The caller's signal; each attempt runs under it combined with its own wall-clock deadline. */
  callerSignal?: AbortSignal;
}
type MetaConfig = AxiosRequestConfig & { cfsMeta?: RetryMeta };

/** Destroys a socket that has not connected within `ms`, which axios' own timeout cannot tell apart. */
function withConnectTimeout<T extends http.Agent>(agent: T, ms: number): T {
  const original = (agent as unknown as { createConnection: (...a: unknown[]) => Duplex }).createConnection.bind(agent);
  (agent as unknown as { createConnection: (...a: unknown[]) => Duplex }).createConnection = (...args: unknown[]) => {
    const socket = original(...args) as Duplex & { connecting?: boolean };
    if (socket && socket.connecting) {
      const timer = setTimeout(() => {
        const err = Object.assign(new Error(`connect timeout after ${ms} ms`), { code: CONNECT_TIMEOUT_CODE });
        socket.destroy(err);
      }, ms);
      timer.unref();
      const clear = () => clearTimeout(timer);
      socket.once('connect', clear);
      socket.once('secureConnect', clear);
      socket.once('close', clear);
    }
    return socket;
  };
  return agent;
}

function isIdempotent(method: string | undefined): boolean {
  const m = (method ?? 'get').toUpperCase();
  return m === 'GET' || m === 'DELETE' || m === 'HEAD' || m === 'PUT';
}

export class Transport {
  private readonly http: AxiosInstance;
  private tokenCache?: { mtimeMs: number; token: string };
  /** The token file's last read failed (logged once per change, not per request). */
  private tokenProblem?: string;

  constructor(private readonly opts: TransportOptions) {
    const ca = opts.caCertPath ? readFileSync(opts.caCertPath) : undefined;
    this.http = axios.create({
      baseURL: opts.baseUrl.replace(/\/+$/, ''),
      timeout: opts.requestTimeoutMs,
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      maxContentLength: opts.maxResponseBytes,
      maxBodyLength: opts.maxResponseBytes,
      maxRedirects: 0,
      proxy: false,
      httpAgent: withConnectTimeout(new http.Agent({ keepAlive: true, maxSockets: 8 }), opts.connectTimeoutMs),
      httpsAgent: withConnectTimeout(new https.Agent({ keepAlive: true, maxSockets: 8, ca }), opts.connectTimeoutMs),
      headers: { Accept: 'application/json' },
    });
    // axios' `timeout` stops counting once response headers arrive, so a trickling body could hold a call forever:
    // every attempt (retries included: interceptors run again) also gets a wall-clock deadline.
    this.http.interceptors.request.use((config) => {
      const meta = (config as MetaConfig).cfsMeta;
      if (meta) {
        const deadline = AbortSignal.timeout(opts.requestTimeoutMs);
        config.signal = meta.callerSignal ? AbortSignal.any([meta.callerSignal, deadline]) : deadline;
      }
      return config;
    });
    axiosRetry(this.http, {
      retries: 20,
      shouldResetTimeout: true,
      retryCondition: (error) => this.shouldRetry(error),
      retryDelay: (count, error) => {
        const meta = (error.config as MetaConfig | undefined)?.cfsMeta;
        const left = meta ? this.opts.retryBudgetMs - (Date.now() - meta.startedAt) : MAX_RETRY_DELAY_MS;
        return Math.max(0, Math.min(MAX_RETRY_DELAY_MS, left, exponentialDelay(count, error, 250)));
      },
      onRetry: (_count, error, config) => {
        const meta = (config as MetaConfig).cfsMeta;
        if (meta) {
          // The delay before the next attempt listens to the caller only (the last attempt's deadline has fired).
          config.signal = meta.callerSignal;
          this.report(config.method, meta.route, this.toError(error, meta.route).statusLabel, meta.attemptStartedAt);
          meta.attemptStartedAt = Date.now();
        }
      },
    });
  }

  private shouldRetry(error: AxiosError): boolean {
    const config = error.config as MetaConfig | undefined;
    if (!config) return false;
    const meta = config.cfsMeta;
    if (meta?.callerSignal?.aborted) return false;
    // Cancelled without the caller asking: the attempt's deadline fired, i.e. a timeout after the request was sent.
    if (axios.isCancel(error) || error.code === 'ERR_CANCELED')
      return isIdempotent(config.method) && !!meta && Date.now() - meta.startedAt < this.opts.retryBudgetMs;
    if (meta && Date.now() - meta.startedAt >= this.opts.retryBudgetMs) return false; // budget spent
    const code = error.code ?? '';
    if (NOT_SENT_CODES.has(code)) return true; // never reached the server: safe for every method
    if (!isIdempotent(config.method)) return false; // a POST/PATCH may have been applied
    if (!error.response) return true; // timeout, reset: repeat a read
    return error.response.status >= 500;
  }

  private bearerToken(): string | undefined {
    const file = this.opts.tokenFile;
    if (!file) return undefined;
    try {
      const { mtimeMs } = statSync(file);
      if (!this.tokenCache || this.tokenCache.mtimeMs !== mtimeMs) {
        this.tokenCache = { mtimeMs, token: readFileSync(file, 'utf8').trim() };
      }
      if (this.tokenProblem !== undefined) log.info(`CFS token file ${file} is readable again`);
      this.tokenProblem = undefined;
      return this.tokenCache.token;
    } catch (err) {
      const problem = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      if (problem !== this.tokenProblem) {
        const using = this.tokenCache ? 'the last token read' : 'no token';
        log.error(`Cannot read the CFS token file ${file} (${problem}); requests go with ${using}`);
      }
      this.tokenProblem = problem;
      return this.tokenCache?.token;
    }
  }

  private report(method: string | undefined, route: string, status: string, startedAt: number): void {
    this.opts.onRequest?.({
      method: (method ?? 'GET').toUpperCase(),
      route,
      status,
      durationMs: Date.now() - startedAt,
    });
  }

  /** Performs one call (with retries) and returns the parsed JSON body, or undefined for an empty body. */
  async call(spec: CallSpec): Promise<unknown> {
    const url = `${this.opts.baseUrl.replace(/\/+$/, '')}${spec.path}`;
    if (spec.signal?.aborted)
      throw new CfsError('aborted', `request aborted: ${spec.method} ${url}`, spec.method, url, spec.route);
    const token = this.bearerToken();
    const config: MetaConfig = {
      method: spec.method,
      url: spec.path,
      params: spec.params,
      data: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      headers: {
        ...(spec.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      cfsMeta: { startedAt: Date.now(), attemptStartedAt: Date.now(), route: spec.route, callerSignal: spec.signal },
    };
    let text: string;
    try {
      const response = await this.http.request<string>(config);
      text = typeof response.data === 'string' ? response.data : '';
      this.report(spec.method, spec.route, String(response.status), config.cfsMeta!.attemptStartedAt);
    } catch (err) {
      const error = this.toError(err, spec.route, spec.method, url, spec.signal);
      this.report(spec.method, spec.route, error.statusLabel, config.cfsMeta!.attemptStartedAt);
      throw error;
    }
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new CfsError(
        'invalid-response',
        `Non-JSON response from CFS for ${spec.method} ${url}: ${(err as Error).message}`,
        spec.method,
        url,
        spec.route,
        200,
        text.slice(0, 200),
      );
    }
  }

  /** Maps whatever axios threw onto a CfsError. */
  toError(err: unknown, route: string, method?: string, url?: string, callerSignal?: AbortSignal): CfsError {
    if (err instanceof CfsError) return err;
    const ax = err as AxiosError;
    const m = (method ?? ax.config?.method ?? 'GET').toUpperCase();
    const u = url ?? `${ax.config?.baseURL ?? ''}${ax.config?.url ?? ''}`;
    if (axios.isCancel(err) || ax.code === 'ERR_CANCELED') {
      const caller = callerSignal ?? (ax.config as MetaConfig | undefined)?.cfsMeta?.callerSignal;
      if (caller?.aborted)
        return new CfsError('aborted', `request aborted: ${m} ${u}`, m, u, route, undefined, undefined, false);
      return new CfsError(
        'timeout',
        `timeout (${this.opts.requestTimeoutMs} ms deadline) calling CFS ${m} ${u}`,
        m,
        u,
        route,
      );
    }
    if (ax.response) {
      const status = ax.response.status;
      let body: unknown = ax.response.data;
      if (typeof body === 'string') {
        try {
          body = JSON.parse(body);
        } catch {
          /* keep the text */
        }
      }
      const raw = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
      const detail = typeof raw === 'string' ? raw.slice(0, 500) : '';
      return new CfsError(
        'http',
        `${status} from CFS for ${m} ${u}${detail ? `: ${detail}` : ''}`,
        m,
        u,
        route,
        status,
        body,
      );
    }
    const code = ax.code ?? '';
    const notSent = NOT_SENT_CODES.has(code);
    if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || code === CONNECT_TIMEOUT_CODE) {
      return new CfsError(
        'timeout',
        `timeout (${code}) calling CFS ${m} ${u}`,
        m,
        u,
        route,
        undefined,
        undefined,
        notSent,
      );
    }
    if (code === 'ERR_FR_MAX_BODY_LENGTH_EXCEEDED' || code === 'ERR_BAD_RESPONSE') {
      return new CfsError('invalid-response', `bad response from CFS for ${m} ${u}: ${ax.message}`, m, u, route);
    }
    return new CfsError(
      'unreachable',
      `cannot reach CFS at ${u}: ${code || ax.message}`,
      m,
      u,
      route,
      undefined,
      undefined,
      notSent,
    );
  }
}
