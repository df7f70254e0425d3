/**
 * What one CFS call went through across its attempts, and what the log says about it: the first failed attempt of
 * every call (whatever the failure: an HTTP status, a timeout, an unreachable CFS) with how long the call keeps
 * trying, then how it ended if it had failed before (answered after retries, or given up). One line at each of those
 * points, never one per attempt. The failure is read from axios's error (`error.response.status`, `error.code`) and
 * the attempt's own record (attempt.ts), never from message text.
 */
import { isAxiosError } from 'axios';
import type { Logger } from '../logger';
import { CONNECT_TIMEOUT_CODE, type AttemptRecord } from './attempt';
import type { CfsError } from './errors';
import type { CallTarget } from './outcome';

/** A call's state while it fails and retries, as the program reports it (`onCallState`). */
export interface CallState {
  /** The same object for every report of one call. */
  readonly call: object;
  readonly method: string;
  readonly route: string;
  /** The last failed attempt's answer, short: `503`, `timeout`, `ECONNREFUSED`. */
  readonly answer: string;
  /** Attempts made so far. */
  readonly attempts: number;
  /** 'retrying': the call will try again within `retryForMs`; 'ended': it answered or gave up. */
  readonly phase: 'retrying' | 'ended';
  /** How much longer the call keeps trying (0 once ended). */
  readonly retryForMs: number;
}

/** One call across its attempts. A class instance, so axios hands the same object to every retry's config. */
export class CfsCall implements CallTarget {
  readonly startedAt = Date.now();
  /** Failed attempts so far. */
  failures = 0;
  /** The last failed attempt's answer (see CallState.answer). */
  lastAnswer = '';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly route: string,
    readonly signal?: AbortSignal,
  ) {}
}

/** The short answer of a failed attempt: the HTTP status, else the socket's code, else the kind. */
export function answerOf(err: unknown, outcome: CfsError): string {
  const status = isAxiosError(err) ? err.response?.status : undefined;
  if (status !== undefined && outcome.kind === 'http') return String(status);
  if (outcome.kind === 'timeout') return 'timeout';
  const code = isAxiosError(err) || err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code !== '' ? code : outcome.kind;
}

/** "answered 503", "did not answer within 10 s", "unreachable (ECONNREFUSED)". */
export function failureText(answer: string, attempt: AttemptRecord | undefined): string {
  if (/^\d{3}$/.test(answer)) return `answered ${answer}`;
  if (answer === 'timeout' || answer === CONNECT_TIMEOUT_CODE)
    return attempt ? `did not answer within ${seconds(attempt.limits.deadlineMs)} s` : 'did not answer in time';
  if (answer === 'invalid-response') return 'answered something unusable';
  return `unreachable (${answer})`;
}

/** Why a failed first attempt is not tried again. */
export function finalWhy(method: string, outcome: CfsError, budgetMs: number): string {
  if (budgetMs <= 0) return 'retry budget 0 s';
  if (outcome.kind === 'http' && (outcome.status ?? 0) < 500) return 'an answer below 500 is final';
  if (method !== 'GET' && method !== 'PUT' && method !== 'DELETE' && !outcome.notSent)
    return `a ${method} that may have reached CFS is never repeated`;
  return 'not retryable';
}

/** "1.5" for 1500 ms, "30" for 29 950 ms: tenths only below 10 s, where they matter. */
export const seconds = (ms: number): string => String(ms >= 10_000 ? Math.round(ms / 1000) : Math.round(ms / 100) / 10);

/** The lines of one call; `log` is the transport's logger. */
export class CallLog {
  constructor(private readonly log: Logger) {}

  private meta(call: CfsCall, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { method: call.method, route: call.route, url: call.url, answer: call.lastAnswer, ...extra };
  }

  /** The first failed attempt of a call, with what happens next. A final 4xx is INFO: it is CFS's answer about a
   * record as often as trouble (a session looked up that is gone), and the caller says which. */
  firstFailure(call: CfsCall, text: string, retryForMs: number | null, why: string): void {
    const what = `${call.method} ${call.route}: CFS ${text}`;
    if (retryForMs !== null)
      this.log.warn(
        `${what}; retrying for up to ${seconds(retryForMs)} s`,
        this.meta(call, { retry_for_ms: retryForMs }),
      );
    else if (/^4\d\d$/.test(call.lastAnswer)) this.log.info(`${what}; not retried (${why})`, this.meta(call));
    else this.log.warn(`${what}; not retried (${why})`, this.meta(call));
  }

  /** A call that had failed and then answered. */
  recovered(call: CfsCall): void {
    const took = Date.now() - call.startedAt;
    this.log.info(
      `${call.method} ${call.route}: CFS answered after ${call.failures + 1} attempts over ${seconds(took)} s (last failure: ${call.lastAnswer})`,
      this.meta(call, { attempts: call.failures + 1, duration_ms: took }),
    );
  }

  /** A call that failed more than once and stops trying. */
  gaveUp(call: CfsCall, why: string): void {
    const took = Date.now() - call.startedAt;
    this.log.warn(
      `${call.method} ${call.route}: giving up after ${call.failures} attempts over ${seconds(took)} s (${why}); last answer: ${call.lastAnswer}`,
      this.meta(call, { attempts: call.failures, duration_ms: took }),
    );
  }
}
