/**
 * HTTP transport for CFS on node:http (node:https is loaded only for an https: base URL): keep-alive sockets, a
 * connect timeout, a wall-clock deadline per attempt, bounded retries and cancellation. It knows nothing about CFS
 * resources; it turns every outcome into a body or a CfsError. (It replaced axios + axios-retry, ~12-16 MB of RSS.)
 */
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { getLogger } from '../logger';
import { CfsError } from './errors';
import {
  AttemptFailure,
  CONNECT_TIMEOUT_CODE,
  exchange,
  pause,
  withQuery,
  type Answer,
  type Exchange,
} from './http-attempt';

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
  CONNECT_TIMEOUT_CODE,
]);
const MAX_RETRIES = 20;
const BASE_RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 5000;

function isIdempotent(method: string): boolean {
  return method === 'GET' || method === 'DELETE' || method === 'HEAD' || method === 'PUT';
}

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date), 0 when absent or unreadable. */
function retryAfterMs(header: string | undefined, now: number): number {
  if (!header) return 0;
  const ms = (Number(header) || 0) * 1000 || (new Date(header).valueOf() || 0) - now;
  return Math.max(0, ms);
}

/** Delay before retry `n` (1, 2, ...): 2^n x 250 ms or what Retry-After asks if longer, plus 0-20 % jitter. */
function retryDelayMs(n: number, retryAfter?: string, now = Date.now()): number {
  const delay = Math.max(2 ** n * BASE_RETRY_DELAY_MS, retryAfterMs(retryAfter, now));
  return delay + delay * 0.2 * Math.random();
}

export class Transport {
  private readonly baseUrl: string;
  /** node:http or node:https (required only for an https: base URL); `.request` is read at each call. */
  private readonly proto: Pick<typeof http, 'request'>;
  private readonly agent: http.Agent;
  private tokenCache?: { mtimeMs: number; token: string };
  /** The token file's last read failed (logged once per change, not per request). */
  private tokenProblem?: string;

  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    const ca = opts.caCertPath ? readFileSync(opts.caCertPath) : undefined;
    if (/^https:/i.test(this.baseUrl)) {
      const https = process.getBuiltinModule('node:https');
      this.proto = https;
      this.agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca });
    } else {
      this.proto = http;
      this.agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    }
  }

  /** Whether to try again after `error`: never after the caller's abort or past the budget; a POST/PATCH only when
   * it certainly never left; a read also after a timeout, a reset, a cut or oversized body, or a 5xx. */
  private shouldRetry(method: string, error: CfsError, startedAt: number, signal?: AbortSignal): boolean {
    if (signal?.aborted || error.kind === 'aborted') return false;
    if (Date.now() - startedAt >= this.opts.retryBudgetMs) return false; // budget spent
    if (error.notSent) return true; // never reached the server: safe for every method
    if (!isIdempotent(method)) return false; // a POST/PATCH may have been applied
    if (error.kind !== 'http') return true; // no (complete) answer: repeat a read
    return (error.status ?? 0) >= 500;
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

  private report(method: string, route: string, status: string, startedAt: number): void {
    this.opts.onRequest?.({ method, route, status, durationMs: Date.now() - startedAt });
  }

  /** Performs one call (with retries) and returns the parsed JSON body, or undefined for an empty body. */
  async call(spec: CallSpec): Promise<unknown> {
    const { method, route, signal } = spec;
    const url = `${this.baseUrl}${spec.path}`;
    if (signal?.aborted) throw this.aborted(method, url, route);
    const token = this.bearerToken();
    const body = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body), 'utf8');
    const headers: http.OutgoingHttpHeaders = { Accept: 'application/json' };
    if (body) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    if (token) headers.Authorization = `Bearer ${token}`;
    const x: Exchange = {
      request: this.proto.request, // read per call: a tracing patch applied after construction is honoured
      agent: this.agent,
      url: withQuery(url, spec.params),
      method,
      headers,
      body,
      connectTimeoutMs: this.opts.connectTimeoutMs,
      deadlineMs: this.opts.requestTimeoutMs,
      maxResponseBytes: this.opts.maxResponseBytes,
      signal,
    };
    const startedAt = Date.now();
    for (let retry = 1; ; retry++) {
      const attemptStartedAt = Date.now();
      const answer = await exchange(x).catch((err: unknown) => this.toError(err, method, url, route));
      if (!(answer instanceof CfsError) && answer.status >= 200 && answer.status < 300) {
        this.report(method, route, String(answer.status), attemptStartedAt);
        return this.parse(answer.text, method, url, route);
      }
      const error = answer instanceof CfsError ? answer : this.httpError(answer, method, url, route);
      this.report(method, route, error.statusLabel, attemptStartedAt);
      if (retry > MAX_RETRIES || !this.shouldRetry(method, error, startedAt, signal)) throw error;
      const left = this.opts.retryBudgetMs - (Date.now() - startedAt);
      const asked = answer instanceof CfsError ? undefined : answer.retryAfter;
      const delay = Math.max(0, Math.min(MAX_RETRY_DELAY_MS, left, retryDelayMs(retry, asked)));
      if (await pause(delay, signal)) throw this.aborted(method, url, route);
    }
  }

  private parse(text: string, method: string, url: string, route: string): unknown {
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      const message = `Non-JSON response from CFS for ${method} ${url}: ${(err as Error).message}`;
      throw new CfsError('invalid-response', message, method, url, route, 200, text.slice(0, 200));
    }
  }

  private aborted(method: string, url: string, route: string): CfsError {
    return new CfsError('aborted', `request aborted: ${method} ${url}`, method, url, route);
  }

  /** A complete answer outside 2xx (redirects are not followed): the status, the body parsed if it is JSON. */
  private httpError(answer: Answer, method: string, url: string, route: string): CfsError {
    let body: unknown = answer.text;
    try {
      body = JSON.parse(answer.text);
    } catch {
      /* keep the text */
    }
    const raw = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
    const detail = typeof raw === 'string' ? raw.slice(0, 500) : '';
    const message = `${answer.status} from CFS for ${method} ${url}${detail ? `: ${detail}` : ''}`;
    return new CfsError('http', message, method, url, route, answer.status, body);
  }

  /** Maps an exchange that ended without an answer onto a CfsError. */
  private toError(err: unknown, method: string, url: string, route: string): CfsError {
    const failure = err instanceof AttemptFailure ? err : undefined;
    const code = failure?.code ?? (err as NodeJS.ErrnoException).code ?? '';
    // EHOSTUNREACH and the like can also end an established connection: only a socket that never connected is proof
    const notSent = NOT_SENT_CODES.has(code) && !failure?.connected;
    switch (failure?.reason) {
      case 'aborted':
        return this.aborted(method, url, route);
      case 'deadline': {
        const message = `timeout (${this.opts.requestTimeoutMs} ms deadline) calling CFS ${method} ${url}`;
        return new CfsError('timeout', message, method, url, route);
      }
      case 'too-large': {
        const message = `bad response from CFS for ${method} ${url}: ${failure.message}`;
        return new CfsError('invalid-response', message, method, url, route);
      }
    }
    if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || code === CONNECT_TIMEOUT_CODE) {
      const message = `timeout (${code}) calling CFS ${method} ${url}`;
      return new CfsError('timeout', message, method, url, route, undefined, undefined, notSent);
    }
    const message = `cannot reach CFS at ${url}: ${code || (err as Error).message}`;
    return new CfsError('unreachable', message, method, url, route, undefined, undefined, notSent);
  }
}
