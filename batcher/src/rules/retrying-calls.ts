/**
 * The CFS calls the loop is retrying right now (pure): the transport reports each failed attempt of a call it will
 * try again and the end of such a call (shared/src/cfs/call-watch.ts); the heartbeat, /status and explain name the
 * one failing longest, its last answer and since when. A cycle's last error only says how a cycle ended; while a call
 * retries, this is the failure going on.
 */
import type { CallState } from '@cfs-batcher/shared';

export interface RetryingCall {
  method: string;
  route: string;
  /** The last failed attempt's answer: `503`, `timeout`, `ECONNREFUSED`. */
  answer: string;
  attempts: number;
  /** First failure of the call (monotonic). */
  since: number;
  /** When the call gives up at the latest (monotonic). */
  until: number;
}

export type RetryingCalls = Map<object, RetryingCall>;

export function noteCallState(calls: RetryingCalls, c: CallState, now: number): void {
  if (c.phase === 'ended') {
    calls.delete(c.call);
    return;
  }
  const since = calls.get(c.call)?.since ?? now;
  calls.set(c.call, {
    method: c.method,
    route: c.route,
    answer: c.answer,
    attempts: c.attempts,
    since,
    until: now + c.retryForMs,
  });
}

/** The call failing longest, or null when none is retrying. */
export function longestRetrying(calls: RetryingCalls): RetryingCall | null {
  let oldest: RetryingCall | null = null;
  for (const r of calls.values()) if (oldest === null || r.since < oldest.since) oldest = r;
  return oldest;
}

/** "CFS answered 503", "CFS did not answer in time", "CFS unreachable (ECONNREFUSED)". */
export function answerText(answer: string): string {
  if (/^\d{3}$/.test(answer)) return `CFS answered ${answer}`;
  if (answer === 'timeout' || answer === 'ECONNTIMEOUT') return 'CFS did not answer in time';
  if (answer === 'invalid-response') return 'CFS answered something unusable';
  return `CFS unreachable (${answer})`;
}

/** "GET /v3/options: CFS answered 503", the call and its last answer. */
export function retryingWhat(r: RetryingCall): string {
  return `${r.method} ${r.route}: ${answerText(r.answer)}`;
}
