/**
 * Session-creation backoff after repeated failures, as a pure state machine (original §4.7).
 *
 * The 20 most recent completed sessions are remembered (initially all successes). When a check completes sessions
 * and none of the 20 succeeded, creation halts for 60 s, doubling on each later expiry up to batcher_max_backoff.
 * One success resets the halt; the deque keeps its earlier failures, so 20 fresh failures are needed to halt again.
 */
export const RECENT_SESSIONS_SIZE = 20;
export const STARTING_BACKOFF_S = 60;

export interface BackoffState {
  readonly recent: readonly boolean[];
  /** Current halt in seconds (0 = none). */
  readonly currentS: number;
  /** When the current halt started (ms). */
  readonly startMs: number;
}

export type BackoffEvent = { kind: 'halted'; seconds: number } | { kind: 'resumed' } | null;

export function initialBackoff(): BackoffState {
  return { recent: Array<boolean>(RECENT_SESSIONS_SIZE).fill(true), currentS: 0, startMs: 0 };
}

/** Records the results of the sessions completed in one check (call only when at least one completed). */
export function recordCompletions(
  s: BackoffState,
  results: readonly boolean[],
  now: number,
  maxBackoffS: number,
): { state: BackoffState; event: BackoffEvent } {
  if (results.length === 0) return { state: s, event: null };
  const recent = [...s.recent, ...results].slice(-RECENT_SESSIONS_SIZE);
  if (recent.some(Boolean)) {
    const event: BackoffEvent = s.currentS !== 0 ? { kind: 'resumed' } : null;
    return { state: { recent, currentS: 0, startMs: s.startMs }, event };
  }
  if (now - s.startMs < s.currentS * 1000) return { state: { ...s, recent }, event: null };
  const next = s.currentS === 0 ? Math.min(maxBackoffS, STARTING_BACKOFF_S) : Math.min(maxBackoffS, 2 * s.currentS);
  return { state: { recent, currentS: next, startMs: now }, event: { kind: 'halted', seconds: next } };
}

export function isBackingOff(s: BackoffState, now: number): boolean {
  return s.currentS > 0 && now - s.startMs < s.currentS * 1000;
}

/** When the current halt ends (ms), or null when none is in force. */
export function backoffUntil(s: BackoffState, now: number): number | null {
  return isBackingOff(s, now) ? s.startMs + s.currentS * 1000 : null;
}
