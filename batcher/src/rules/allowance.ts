/**
 * The pending-sessions allowance (no I/O): how many batcher sessions may wait in CFS for the cfs-operator at once.
 * The operator cannot be asked how fast it is, so the allowance follows what comes back, the way a TCP sender's
 * congestion window follows acknowledgements:
 * - a session seen leaving pending soon after its create (within a tenth of `batcher_pending_timeout`) is a prompt
 *   start: while the allowance is being used (at least half of it pending), each one adds one, so the allowance
 *   doubles every round of starts, up to the ceiling;
 * - a start slower than that changes nothing: the operator keeps up, but not with more;
 * - a session still pending after half the timeout halves the allowance (once per generation: again only when a
 *   session created after that halving ages as far), and one pending three quarters of it drops the allowance to
 *   the floor: what is pending then is what the operator has not started, and the timeout deletes it next.
 * Floor 4: while the operator is stopped or overwhelmed the batcher keeps a few sessions (100 components at the
 * default batch size) in CFS to see it start again, and loses no more than those to the timeout each time.
 * Start 40: the fixed cap this replaces, which kept a slow operator's queue far from the timeout.
 * Ceiling (BATCHER_PENDING_SESSIONS_CAP, 1000 by default): one page of the pending list at CFS's default page size,
 * and the most an operator that stops at the worst moment leaves for the timeout to delete.
 */
import type { AllowanceWhy } from '@cfs-batcher/shared';

export const ALLOWANCE_FLOOR = 4;
export const ALLOWANCE_START = 40;

export type { AllowanceWhy };

export interface Allowance {
  /** Sessions that may be pending at once (fractional inside; reported whole). */
  value: number;
  why: AllowanceWhy;
  /** One human line: why it has its value. */
  reason: string;
  /** When it was last halved or floored (monotonic), null before. */
  shrunkAt: number | null;
  /** The last start observed: how long it waited in pending (ms). */
  lastStartMs: number | null;
  /** The oldest of our sessions still pending at the last observation (ms), null when none. */
  oldestPendingMs: number | null;
}

/** The ceiling in force (0 = no ceiling given: pacing off) and the pending timeout, in seconds. */
export interface AllowanceBounds {
  ceiling: number;
  pendingTimeoutS: number;
}

/** What one read of the pending sessions showed. */
export interface PendingObservation {
  now: number;
  /** Our sessions seen leaving pending since the last read: how long each waited (ms). */
  startedAfterMs: readonly number[];
  /** Batcher sessions pending before these starts left (the allowance in use). */
  pendingBefore: number;
  /** Of our sessions still pending: the oldest one's create time (monotonic), null when none. */
  oldestPendingSince: number | null;
}

export function floorOf(b: AllowanceBounds): number {
  return Math.min(ALLOWANCE_FLOOR, b.ceiling);
}

/** The ceiling applies where the allowance is used (pacing.ts pendingAllowed) and at each observation. */
export function initialAllowance(): Allowance {
  return {
    value: ALLOWANCE_START,
    why: 'start',
    reason: 'the starting allowance, before any session is seen starting',
    shrunkAt: null,
    lastStartMs: null,
    oldestPendingMs: null,
  };
}

/** A start within this is prompt. */
export function promptMs(b: AllowanceBounds): number {
  return (b.pendingTimeoutS * 1000) / 10;
}

/** A session pending this long halves the allowance... */
export function halveAtMs(b: AllowanceBounds): number {
  return (b.pendingTimeoutS * 1000) / 2;
}

/** ...and this long drops it to the floor. */
export function floorAtMs(b: AllowanceBounds): number {
  return (b.pendingTimeoutS * 1000 * 3) / 4;
}

/** The allowance as a whole number of sessions. */
export function allowed(a: Allowance): number {
  return Math.floor(a.value);
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** Pure: the allowance after one observation of the pending sessions. */
export function observePending(a: Allowance, o: PendingObservation, b: AllowanceBounds): Allowance {
  const lo = floorOf(b);
  const next: Allowance = { ...a, value: Math.min(Math.max(a.value, lo), b.ceiling) };
  const last = o.startedAfterMs.at(-1);
  if (last !== undefined) next.lastStartMs = last;
  const age = o.oldestPendingSince === null ? null : Math.max(0, o.now - o.oldestPendingSince);
  next.oldestPendingMs = age;
  const timeout = `batcher_pending_timeout ${b.pendingTimeoutS} s`;
  if (age !== null && age >= floorAtMs(b)) {
    // Already there: one event, not one per read.
    if (a.why === 'floor' && next.value <= lo) return next;
    return shrink(next, lo, lo, o.now, 'floor', `a session has waited ${secs(age)} in pending, 3/4 of ${timeout}`);
  }
  // A halving reacts to the sessions created before it; the next one waits for a session created after it.
  const newGeneration = a.shrunkAt === null || (o.oldestPendingSince !== null && o.oldestPendingSince > a.shrunkAt);
  if (age !== null && age >= halveAtMs(b) && newGeneration) {
    return shrink(
      next,
      next.value / 2,
      lo,
      o.now,
      'halved',
      `a session has waited ${secs(age)} in pending, half of ${timeout}`,
    );
  }
  const prompt = o.startedAfterMs.filter((ms) => ms <= promptMs(b)).length;
  // Grown only while in use (prompt starts with little pending say nothing about more), and not while a session
  // already halved for is still waiting.
  const aging = age !== null && age >= halveAtMs(b);
  if (prompt > 0 && !aging && o.pendingBefore * 2 >= next.value) {
    const value = Math.min(b.ceiling, next.value + prompt);
    if (value >= b.ceiling) return settle(next, b.ceiling, 'ceiling', 'sessions start promptly');
    return settle(
      next,
      value,
      'grown',
      `sessions start promptly (the last after ${secs(last!)}, prompt within ${secs(promptMs(b))})`,
    );
  }
  if (last !== undefined && prompt === 0 && next.why !== 'halved' && next.why !== 'floor') {
    return settle(
      next,
      next.value,
      'holding',
      `sessions start slowly (the last after ${secs(last)}, prompt within ${secs(promptMs(b))})`,
    );
  }
  return next;
}

const LEAD: Record<AllowanceWhy, string> = {
  start: '',
  grown: 'grown',
  ceiling: 'at its ceiling (BATCHER_PENDING_SESSIONS_CAP)',
  holding: 'held',
  halved: 'halved',
  floor: 'at its floor',
};

function settle(a: Allowance, value: number, why: AllowanceWhy, because: string): Allowance {
  return { ...a, value, why, reason: `${LEAD[why]}: ${because}` };
}

function shrink(a: Allowance, value: number, lo: number, now: number, why: AllowanceWhy, because: string): Allowance {
  return { ...settle(a, Math.max(value, lo), why, because), shrunkAt: now };
}
