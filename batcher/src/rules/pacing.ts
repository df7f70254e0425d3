/**
 * Operator-aware pacing (no I/O): CFS sessions created faster than the cfs-operator can start them sit in pending
 * (a CSM known issue whose fix is a manual Kafka purge) until the pending timeout deletes them. So a create waits
 * while as many batcher sessions are pending in CFS as the allowance (rules/allowance.ts), which follows how
 * promptly the operator starts them; otherwise creates go as fast as CFS takes them. The send phase waits for the
 * operator while it keeps starting sessions (phases/send/pacing-wait.ts), so the pace is the operator's. The
 * creates-per-minute cap is a guard against a runaway, far above what an operator starts.
 */
import { allowed, initialAllowance, type Allowance } from './allowance';

export const RATE_WINDOW_MS = 60_000;

export interface PacingCaps {
  /** The allowance's ceiling; 0 = no pacing on pending sessions at all. */
  pendingSessionsCap: number;
  createsPerMinuteCap: number;
}

export interface PacingState {
  /** Batcher sessions pending in CFS: from the last pending list, plus the ones created since. */
  pendingSessions: number;
  /** Sessions that may be pending at once now, and why. */
  allowance: Allowance;
  /** Our sessions not yet seen leaving pending: name -> create time (monotonic). */
  awaiting: Map<string, number>;
  /** Monotonic times of the creates within the last RATE_WINDOW_MS, oldest first. */
  recentCreates: number[];
  /** Why the last send phase was held, or null when it was not. */
  limited: PacingLimit | null;
}

export interface PacingLimit {
  why: 'pending_cap' | 'rate';
  reason: string;
  /** When the gate reopens (monotonic), or null when only CFS can open it (sessions leaving pending). */
  until: number | null;
}

export function initialPacing(): PacingState {
  return {
    pendingSessions: 0,
    allowance: initialAllowance(),
    awaiting: new Map(),
    recentCreates: [],
    limited: null,
  };
}

/** The pending sessions allowed now; Infinity when pacing on pending sessions is off. */
export function pendingAllowed(s: PacingState, caps: PacingCaps): number {
  return caps.pendingSessionsCap > 0 ? Math.min(allowed(s.allowance), caps.pendingSessionsCap) : Infinity;
}

/** Why the allowance in force has its value: the ceiling when that binds, else the allowance's own reason. */
export function allowanceReason(s: PacingState, caps: PacingCaps): string {
  if (caps.pendingSessionsCap <= 0) return 'pacing off (BATCHER_PENDING_SESSIONS_CAP=0)';
  if (caps.pendingSessionsCap <= allowed(s.allowance) && s.allowance.why !== 'ceiling')
    return 'its ceiling, BATCHER_PENDING_SESSIONS_CAP';
  return s.allowance.reason;
}

function forget(s: PacingState, now: number): void {
  while (s.recentCreates.length > 0 && now - s.recentCreates[0]! >= RATE_WINDOW_MS) s.recentCreates.shift();
}

/** Null when a create may go now; else why not and until when. */
export function pacingGate(s: PacingState, caps: PacingCaps, now: number): PacingLimit | null {
  forget(s, now);
  const limit = pendingAllowed(s, caps);
  if (s.pendingSessions >= limit) {
    return {
      why: 'pending_cap',
      reason: `${s.pendingSessions} batcher sessions pending in CFS reach the allowance of ${limit} (${allowanceReason(s, caps)})`,
      until: null,
    };
  }
  if (caps.createsPerMinuteCap > 0 && s.recentCreates.length >= caps.createsPerMinuteCap) {
    return {
      why: 'rate',
      reason: `${s.recentCreates.length} sessions created in the last minute (cap ${caps.createsPerMinuteCap})`,
      until: s.recentCreates[0]! + RATE_WINDOW_MS,
    };
  }
  return null;
}

/** How many creates may go now under both caps (Infinity when neither is set). */
export function createRoom(s: PacingState, caps: PacingCaps, now: number): number {
  forget(s, now);
  let room = Infinity;
  room = Math.min(room, pendingAllowed(s, caps) - s.pendingSessions);
  if (caps.createsPerMinuteCap > 0) room = Math.min(room, caps.createsPerMinuteCap - s.recentCreates.length);
  return Math.max(0, room);
}

/** How a send phase waits for the operator while the pending cap holds. */
export interface PacingWaitPolicy {
  /** Between two reads of the pending sessions. */
  pacingPollMs: number;
  /** The phase ends when no session has left pending for this long. */
  pacingStallMs: number;
}

/**
 * Pure: wait for the operator (true) or end the phase (false)? Only the pending cap is waited for, and only while
 * the operator is starting sessions (`sinceProgressMs`, also counted in polls in case the clock does not move) and
 * the next poll fits in the send slice.
 */
export function waitForOperator(
  limit: PacingLimit,
  p: PacingWaitPolicy,
  w: { now: number; sliceEnd: number; sinceProgressMs: number; pollsWithoutProgress: number },
): boolean {
  if (limit.why !== 'pending_cap') return false;
  if (w.now + p.pacingPollMs >= w.sliceEnd) return false;
  const stallPolls = Math.ceil(p.pacingStallMs / Math.max(1, p.pacingPollMs));
  return w.sinceProgressMs < p.pacingStallMs && w.pollsWithoutProgress < stallPolls;
}

/**
 * A session was created (or adopted): it counts as pending until a pending list shows otherwise, and the time it
 * leaves pending is how promptly the operator started it (`name`: watched for that).
 */
export function noteCreate(s: PacingState, now: number, name?: string): void {
  s.pendingSessions += 1;
  s.recentCreates.push(now);
  if (name !== undefined) s.awaiting.set(name, now);
}
