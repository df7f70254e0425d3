/**
 * The CFS transport: one axios instance on its http adapter (keep-alive agents of our own, no proxy, no redirects),
 * axios-retry for the retry rules, and interceptors for what belongs to each attempt: an Attempt (connect, deadline
 * over the whole answer, size cap: attempt.ts), the bearer token, one report per attempt. It knows nothing about CFS
 * resources; every outcome becomes a body or a CfsError (outcome.ts).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import axios, {
  isAxiosError,
  type AxiosError,
  type AxiosInstance,
  type AxiosRequestConfig,
  type InternalAxiosRequestConfig,
} from 'axios';
import axiosRetry, { exponentialDelay } from 'axios-retry';
import { getLogger } from '../logger';
import { Attempt, type AttemptLimits } from './attempt';
import { abortedError, failureCode, parseBody, shouldRetry, toCfsError, type CallTarget } from './outcome';
import { TokenFile } from './token-file';

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

const MAX_RETRIES = 20;
/** Retry `n` waits 2^n x 250 ms, or what Retry-After asks if longer, plus 0-20 % jitter (axios-retry's
 * exponentialDelay), at most 5 s and never past the budget. */
const BASE_RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 5000;

/** One call across its attempts. A class instance, so axios hands the same object to every retry's config. */
class CfsCall implements CallTarget {
  readonly startedAt = Date.now();
  /** The "unreachable, retrying" line was logged for this call. */
  warned = false;
  constructor(
    readonly method: string,
    readonly url: string,
    readonly route: string,
    readonly signal?: AbortSignal,
  ) {}
}

/** This transport's own fields on an axios config: axios keeps unknown keys, and hands a class instance (the call)
 * to every retry's config as the same object. */
interface CfsFields {
  /** The CFS call this request belongs to. */
  cfsCall?: CfsCall;
  /** This attempt of it; undefined for an attempt axios refuses before sending (the caller had aborted). */
  cfsAttempt?: Attempt;
}
const fields = (config: AxiosRequestConfig | undefined): CfsFields => (config ?? {}) as CfsFields;

const seconds = (ms: number): string => String(Math.round(ms / 100) / 10);

export class Transport {
  private readonly baseUrl: string;
  private readonly requestModule: typeof http | typeof https;
  private readonly client: AxiosInstance;
  private readonly limits: AttemptLimits;
  private readonly token?: TokenFile;

  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.limits = {
      connectTimeoutMs: opts.connectTimeoutMs,
      deadlineMs: opts.requestTimeoutMs,
      maxResponseBytes: opts.maxResponseBytes,
    };
    this.token = opts.tokenFile ? new TokenFile(opts.tokenFile) : undefined;
    const secure = /^https:/i.test(this.baseUrl);
    this.requestModule = secure ? https : http;
    const agent = secure
      ? new https.Agent({
          keepAlive: true,
          maxSockets: 8,
          ca: opts.caCertPath ? readFileSync(opts.caCertPath) : undefined,
        })
      : new http.Agent({ keepAlive: true, maxSockets: 8 });
    this.client = axios.create({
      baseURL: this.baseUrl,
      // Node's http stack, never fetch: the Attempt (attempt.ts) is the http adapter's `transport` and sees the socket
      adapter: 'http',
      httpAgent: secure ? undefined : agent,
      httpsAgent: secure ? agent : undefined,
      proxy: false, // straight to CFS: an HTTP(S)_PROXY in the pod's environment must not divert it
      maxRedirects: 0, // a redirect is an http error, never followed
      maxContentLength: opts.maxResponseBytes,
      timeout: opts.requestTimeoutMs, // axios's idle timer; the Attempt's deadline also covers a trickling body
      responseType: 'text', // parsed in outcome.ts: a non-JSON 2xx is a clear error, an error body is kept as text
      headers: { Accept: 'application/json' },
      transitional: { clarifyTimeoutError: true },
    });
    // Registered before axios-retry's, so they run once per attempt and the retry rule sees the attempt's outcome.
    this.client.interceptors.request.use((config) => this.begin(config));
    this.client.interceptors.response.use(
      (res) => {
        fields(res.config).cfsAttempt?.finish();
        this.report(res.config, String(res.status));
        return res;
      },
      (err: unknown) => this.failed(err),
    );
    axiosRetry(this.client, {
      retries: MAX_RETRIES,
      shouldResetTimeout: true, // every attempt gets the full deadline; the retry budget bounds the call
      retryCondition: (err) => this.retryable(err),
      retryDelay: (n, err) => {
        const left = this.opts.retryBudgetMs - (Date.now() - (fields(err.config).cfsCall?.startedAt ?? 0));
        return Math.max(0, Math.min(MAX_RETRY_DELAY_MS, left, exponentialDelay(n, err, BASE_RETRY_DELAY_MS)));
      },
      onRetry: (_n, err, config) => this.beforeRetry(err, config),
    });
  }

  /** Performs one call (with retries) and returns the parsed JSON body, or undefined for an empty body. */
  async call(spec: CallSpec): Promise<unknown> {
    const call = new CfsCall(spec.method, `${this.baseUrl}${spec.path}`, spec.route, spec.signal);
    if (spec.signal?.aborted) throw abortedError(call);
    const config: AxiosRequestConfig & CfsFields = {
      method: spec.method,
      url: spec.path,
      params: spec.params,
      data: spec.body,
      cfsCall: call,
    };
    const res = await this.client.request<string>(config).catch((err: unknown) => {
      const outcome = isAxiosError(err) ? fields(err.config).cfsAttempt?.outcome : undefined;
      throw outcome ?? (spec.signal?.aborted ? abortedError(call) : toCfsError(err, call, undefined));
    });
    return parseBody(res.data, call);
  }

  /** Starts an attempt: its signal and Node transport, and the current token. */
  private begin(config: InternalAxiosRequestConfig): InternalAxiosRequestConfig {
    const own = fields(config);
    const caller = own.cfsCall?.signal;
    if (caller?.aborted) {
      // aborted during the retry delay: axios refuses to send on an aborted signal; nothing to report
      own.cfsAttempt = undefined;
      config.signal = caller;
      return config;
    }
    const attempt = new Attempt(this.limits, caller);
    own.cfsAttempt = attempt;
    config.signal = attempt.signal;
    config.transport = attempt.transport(this.requestModule);
    const token = this.token?.token();
    if (token) config.headers.Authorization = `Bearer ${token}`;
    return config;
  }

  /** Classifies a failed attempt (once, for the retry rule and the caller) and reports it; axios-retry goes on. */
  private failed(err: unknown): never {
    const config = isAxiosError(err) ? err.config : undefined;
    const { cfsCall: call, cfsAttempt: attempt } = fields(config);
    if (config && call && attempt) {
      attempt.finish();
      attempt.outcome = toCfsError(err, call, attempt);
      this.report(config, attempt.outcome.statusLabel);
    }
    throw err; // axios passes a thrown error on to the next interceptor: axios-retry's
  }

  private retryable(err: AxiosError): boolean {
    const { cfsCall: call, cfsAttempt: attempt } = fields(err.config);
    const outcome = attempt?.outcome;
    if (!call || !outcome) return false;
    const elapsed = Date.now() - call.startedAt;
    return shouldRetry(call.method, outcome, elapsed, this.opts.retryBudgetMs, call.signal?.aborted ?? false);
  }

  /** Before the delay: the delay listens to the caller alone (the last attempt's signal may have ended it), and the
   * first failure that finds CFS unreachable is said at once rather than when the budget is spent. */
  private beforeRetry(err: AxiosError, config: AxiosRequestConfig): void {
    const { cfsCall: call, cfsAttempt: attempt } = fields(config);
    if (!call) return;
    config.signal = call.signal;
    const outcome = attempt?.outcome;
    if (call.warned || !outcome || !(outcome.kind === 'unreachable' || outcome.notSent)) return;
    call.warned = true;
    const code = failureCode(err) || outcome.kind;
    log.warn(`CFS unreachable at ${call.url}: ${code}; retrying for up to ${seconds(this.opts.retryBudgetMs)} s`);
  }

  private report(config: InternalAxiosRequestConfig, status: string): void {
    const { cfsCall: call, cfsAttempt: attempt } = fields(config);
    if (!call || !attempt) return;
    const durationMs = Date.now() - attempt.startedAt;
    this.opts.onRequest?.({ method: call.method, route: call.route, status, durationMs });
  }
}
