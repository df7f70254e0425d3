/**
 * The CFS transport: one axios instance on its http adapter (keep-alive agents of our own, no proxy, no redirects),
 * axios-retry for the retry rules and their hooks (each call's first failure and its end are said once: call-watch.ts),
 * and interceptors for what belongs to each attempt: an Attempt (connect, deadline over the whole answer, size cap:
 * attempt.ts), the bearer token, one report per attempt. It knows nothing about CFS
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
import { Attempt, type AttemptLimits, type AttemptRecord } from './attempt';
import { CallLog, CfsCall, answerOf, failureText, finalWhy, seconds, type CallState } from './call-watch';
import { abortedError, parseBody, shouldRetry, toCfsError } from './outcome';
import { TokenFile } from './token-file';

const callLog = new CallLog(getLogger('cfs.transport'));

/** This transport's own fields on an axios config, declared the way axios-retry declares its own: axios keeps them
 * on the config, and hands the call (a class instance) to every retry's config as the same object. */
declare module 'axios' {
  interface AxiosRequestConfig {
    /** The CFS call this request belongs to. */
    cfsCall?: CfsCall;
    /** This attempt of it; undefined for an attempt axios refuses before sending (the caller had aborted). */
    cfsAttempt?: AttemptRecord;
  }
}

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
  /** Each failed attempt of a call that will be retried, and the end of a call that had failed (call-watch.ts). */
  onCallState?: (c: CallState) => void;
  /** Log each call's first failure and its end (call-watch.ts); off for callers that report failures themselves. */
  logFailures?: boolean;
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
        res.config.cfsAttempt?.finish();
        this.report(res.config, String(res.status));
        const call = res.config.cfsCall;
        if (call && call.failures > 0 && this.logs) callLog.recovered(call);
        return res;
      },
      (err: unknown) => this.failed(err),
    );
    axiosRetry(this.client, {
      retries: MAX_RETRIES,
      shouldResetTimeout: true, // every attempt gets the full deadline; the retry budget bounds the call
      retryCondition: (err) => this.retryable(err),
      retryDelay: (n, err) => {
        const left = this.opts.retryBudgetMs - (Date.now() - (err.config?.cfsCall?.startedAt ?? 0));
        return Math.max(0, Math.min(MAX_RETRY_DELAY_MS, left, exponentialDelay(n, err, BASE_RETRY_DELAY_MS)));
      },
      onRetry: (_n, _err, config) => {
        // the delay listens to the caller alone: the last attempt's signal may have ended it
        config.signal = config.cfsCall?.signal;
      },
      onMaxRetryTimesExceeded: (err, retries) => this.gaveUp(err, `${retries} retries made`),
    });
  }

  /** Performs one call (with retries) and returns the parsed JSON body, or undefined for an empty body. */
  async call(spec: CallSpec): Promise<unknown> {
    const call = new CfsCall(spec.method, `${this.baseUrl}${spec.path}`, spec.route, spec.signal);
    if (spec.signal?.aborted) throw abortedError(call);
    const config: AxiosRequestConfig = {
      method: spec.method,
      url: spec.path,
      params: spec.params,
      data: spec.body,
      cfsCall: call,
    };
    try {
      const res = await this.client.request<string>(config).catch((err: unknown) => {
        const outcome = isAxiosError(err) ? err.config?.cfsAttempt?.outcome : undefined;
        throw outcome ?? (spec.signal?.aborted ? abortedError(call) : toCfsError(err, call, undefined));
      });
      return parseBody(res.data, call);
    } finally {
      if (call.failures > 0) this.callState(call, 'ended', 0);
    }
  }

  /** Starts an attempt: its signal and Node transport, and the current token. */
  private begin(config: InternalAxiosRequestConfig): InternalAxiosRequestConfig {
    const caller = config.cfsCall?.signal;
    if (caller?.aborted) {
      // aborted during the retry delay: axios refuses to send on an aborted signal; nothing to report
      config.cfsAttempt = undefined;
      config.signal = caller;
      return config;
    }
    const attempt = new Attempt(this.limits, caller);
    config.cfsAttempt = attempt;
    config.signal = attempt.signal;
    config.transport = attempt.transport(this.requestModule);
    const token = this.token?.token();
    if (token) config.headers.Authorization = `Bearer ${token}`;
    return config;
  }

  /** Classifies a failed attempt (once, for the retry rule and the caller) and reports it; axios-retry goes on. */
  private failed(err: unknown): never {
    const config = isAxiosError(err) ? err.config : undefined;
    const { cfsCall: call, cfsAttempt: attempt } = config ?? {};
    if (config && call && attempt) {
      attempt.finish();
      attempt.outcome = toCfsError(err, call, attempt);
      this.report(config, attempt.outcome.statusLabel);
    }
    throw err; // axios passes a thrown error on to the next interceptor: axios-retry's
  }

  private get logs(): boolean {
    return this.opts.logFailures !== false;
  }

  /** axios-retry's retry condition, and the place each failed attempt is noted: the first failure of a call is said
   * with what happens next, a call that stops after several is said to give up. */
  private retryable(err: AxiosError): boolean {
    const { cfsCall: call, cfsAttempt: attempt } = err.config ?? {};
    const outcome = attempt?.outcome;
    if (!call || !outcome) return false;
    const elapsed = Date.now() - call.startedAt;
    const budget = this.opts.retryBudgetMs;
    const again = shouldRetry(call.method, outcome, elapsed, budget, call.signal?.aborted ?? false);
    if (outcome.kind === 'aborted' || call.signal?.aborted) return false; // stopping: nothing to say
    call.failures += 1;
    call.lastAnswer = answerOf(err, outcome);
    const retryFor = Math.max(0, budget - elapsed);
    if (this.logs && call.failures === 1)
      callLog.firstFailure(
        call,
        failureText(call.lastAnswer, attempt),
        again ? retryFor : null,
        finalWhy(call.method, outcome, budget),
      );
    else if (this.logs && !again)
      callLog.gaveUp(
        call,
        elapsed >= budget ? `retry budget ${seconds(budget)} s spent` : finalWhy(call.method, outcome, budget),
      );
    if (again) this.callState(call, 'retrying', retryFor);
    return again;
  }

  /** The retry count is spent (the budget usually ends a call first). */
  private gaveUp(err: AxiosError, why: string): void {
    const { cfsCall: call, cfsAttempt: attempt } = err.config ?? {};
    if (!call || !attempt?.outcome) return;
    call.failures += 1;
    call.lastAnswer = answerOf(err, attempt.outcome);
    if (this.logs) callLog.gaveUp(call, why);
  }

  private callState(call: CfsCall, phase: CallState['phase'], retryForMs: number): void {
    const { method, route, lastAnswer: answer, failures } = call;
    this.opts.onCallState?.({ call, method, route, answer, attempts: failures, phase, retryForMs });
  }

  private report(config: InternalAxiosRequestConfig, status: string): void {
    const { cfsCall: call, cfsAttempt: attempt } = config;
    if (!call || !attempt) return;
    const durationMs = Date.now() - attempt.startedAt;
    this.opts.onRequest?.({ method: call.method, route: call.route, status, durationMs });
  }
}
