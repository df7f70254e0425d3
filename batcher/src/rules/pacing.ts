/**
 * Operator-aware pacing (no I/O): CFS sessions created faster than the cfs-operator can start them sit in pending
 * (a CSM known issue whose fix is a manual Kafka purge) until the pending timeout deletes them. So a create waits
 * while too many batcher sessions are still pending in CFS, and creates are capped per minute.
 */
export const RATE_WINDOW_MS = 60_000;

export interface PacingCaps {
  /** 0 = no cap. */
  pendingSessionsCap: number;
  createsPerMinuteCap: number;
}

export interface PacingState {
  /** Batcher sessions pending in CFS: from check_status's pending list, plus the ones created since. */
  pendingSessions: number;
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
  return { pendingSessions: 0, recentCreates: [], limited: null };
}

function forget(s: PacingState, now: number): void {
  while (s.recentCreates.length > 0 && now - s.recentCreates[0]! >= RATE_WINDOW_MS) s.recentCreates.shift();
}

/** Null when a create may go now; else why not and until when. */
export function pacingGate(s: PacingState, caps: PacingCaps, now: number): PacingLimit | null {
  forget(s, now);
  if (caps.pendingSessionsCap > 0 && s.pendingSessions >= caps.pendingSessionsCap) {
    return {
      why: 'pending_cap',
      reason: `${s.pendingSessions} batcher sessions pending in CFS (cap ${caps.pendingSessionsCap})`,
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

/** A session was created (or adopted): it counts as pending until check_status sees otherwise. */
export function noteCreate(s: PacingState, now: number): void {
  s.pendingSessions += 1;
  s.recentCreates.push(now);
}
