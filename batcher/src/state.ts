/**
 * What the batcher knows between cycles (one mutable record, owned by the loop and written by the phases), and what
 * the outside sees of it: the heartbeat body and the gauges, both pure functions of the state and the time.
 */
import type { CfsError, ComponentPatch } from '@cfs-batcher/shared';
import { creatingView, initialCreating, troubleSince, type CreatingTrack } from './creating';
import type { HeartbeatBody } from './heartbeat-writer';
import type { BatcherMetrics } from './metrics';
import { backoffUntil, initialBackoff, isBackingOff, type BackoffState } from './rules/backoff';
import type { RetryPolicy } from './rules/batch';
import { BatchBook, type BookTally } from './rules/batch-book';
import { InternPool } from './rules/intern';
import { DEFAULT_OPTIONS, newOptionsMemory, type BatcherOptions, type OptionsMemory } from './rules/options';
import { initialPacing, type PacingCaps, type PacingState } from './rules/pacing';
import type { Batch } from './rules/batch';

/** A finished session whose completion PATCHes are not all written: its batch stays held (members busy) till they are. */
export interface PendingCompletion {
  batch: Batch;
  success: boolean;
  result: 'succeeded' | 'failed';
  /** Writes still to do. */
  patches: { id: string; patch: ComponentPatch }[];
}

export interface LastCycle {
  completed_at_ms: number;
  duration_ms: number;
  outcome: 'ok' | 'error';
  error?: string;
}

export interface CfsLastError {
  at_ms: number;
  kind: string;
  message: string;
}

export interface BatcherState {
  /** The CFS options in force (last good values, or the defaults). */
  options: BatcherOptions;
  backoff: BackoffState;
  rebuilt: boolean;
  cycles: number;
  sessionsCreatedTotal: number;
  lastSessionCreatedMs: number | null;
  /** Schedulable pending components seen by the last collect. */
  pendingSeen: number;
  /** When the last collect began (monotonic): records read since then are this cycle's (send POSTs only those). */
  collectStartedAt: number;
  /** Creates held back until then (monotonic) after an unusable create-intents file; 0 when not held. */
  intentsHeldUntil: number;
  lastCycle: LastCycle | null;
  cfsLastSuccess: number | null;
  cfsLastError: CfsLastError | null;
  /** What earlier options answers held (decides which missing options may be written back). */
  optionsMemory: OptionsMemory;
  /** Option problems already warned about (each is warned once until it goes away). */
  optionProblems: Set<string>;
  /** Component id -> rejection reason from the last collect (warned once per id and reason). */
  rejectedComponents: Map<string, string>;
  /** This cycle's counts (reset when a cycle starts). */
  cycleCreated: number;
  cycleCompleted: number;
  /** Attempts, CFS trouble and answers, for the heartbeat's `creating` and `progress`. */
  readonly creating: CreatingTrack;
  readonly pacing: PacingState;
  readonly pacingCaps: PacingCaps;
  /** Batch id -> completion writes still to do (check-status retries them every cycle within its PATCH budget). */
  readonly completions: Map<number, PendingCompletion>;
  /** When the sleep in progress ends (monotonic), null while working. */
  nextCycleAt: number | null;
  /** batcher_disable was seen true since the last reset: when it goes false the create backoff is reset. */
  disableSeen: boolean;
  readonly book: BatchBook;
  /** Shares repeated values between component snapshots (see rules/intern.ts); a new generation every collection. */
  readonly pool: InternPool;
}

export function newState(retry?: RetryPolicy & Partial<PacingCaps>): BatcherState {
  return {
    options: { ...DEFAULT_OPTIONS },
    backoff: initialBackoff(),
    rebuilt: false,
    cycles: 0,
    sessionsCreatedTotal: 0,
    lastSessionCreatedMs: null,
    pendingSeen: 0,
    collectStartedAt: 0,
    intentsHeldUntil: 0,
    lastCycle: null,
    cfsLastSuccess: null,
    cfsLastError: null,
    optionsMemory: newOptionsMemory(),
    optionProblems: new Set(),
    rejectedComponents: new Map(),
    cycleCreated: 0,
    cycleCompleted: 0,
    creating: initialCreating(),
    pacing: initialPacing(),
    pacingCaps: {
      pendingSessionsCap: retry?.pendingSessionsCap ?? 0,
      createsPerMinuteCap: retry?.createsPerMinuteCap ?? 0,
    },
    completions: new Map(),
    nextCycleAt: null,
    disableSeen: false,
    book: new BatchBook(retry),
    pool: new InternPool(),
  };
}

/** A time as the heartbeat carries it: whole, non-negative milliseconds. */
export function msStamp(t: number): number {
  return Math.max(0, Math.floor(t));
}

/** Reported in the heartbeat: the sidecar must read CFS trouble as CFS trouble, not as a stalled loop. */
export function noteCfsError(s: BatcherState, err: CfsError, now: number): void {
  s.cfsLastError = { at_ms: msStamp(now), kind: err.kind, message: err.message };
}

/** Batches holding their members in a session, or under a create whose outcome is unknown. */
function activeBatches(t: BookTally): number {
  return t.active + t.uncertain;
}

/**
 * The heartbeat body. State times are monotonic (clock.ts); `offset` (wall - monotonic, now) turns them into the
 * wall-clock epoch the sidecar compares with its own clock, so an age stays right after a wall-clock jump.
 */
export function heartbeatBody(s: BatcherState, now: number, offset = 0): HeartbeatBody {
  const active = isBackingOff(s.backoff, now);
  const wall = (t: number | null): number | null => (t === null ? null : msStamp(t + offset));
  const until = backoffUntil(s.backoff, now);
  const tally = s.book.tally();
  const creating = creatingView(s, now, tally);
  return {
    cycle: s.cycles,
    last_cycle: s.lastCycle ? { ...s.lastCycle, completed_at_ms: msStamp(s.lastCycle.completed_at_ms + offset) } : null,
    options: {
      batcher_check_interval: s.options.batcher_check_interval,
      batch_window: s.options.batch_window,
      batch_size: s.options.batch_size,
      batcher_pending_timeout: s.options.batcher_pending_timeout,
    },
    disabled: s.options.batcher_disable,
    backoff: { active, seconds: active ? s.backoff.currentS : 0, until_ms: wall(until) },
    cfs: {
      last_success_ms: wall(s.cfsLastSuccess),
      last_error: s.cfsLastError ? { ...s.cfsLastError, at_ms: msStamp(s.cfsLastError.at_ms + offset) } : null,
    },
    counters: {
      pending_seen: s.pendingSeen,
      batches_queued: tally.queued,
      batches_active: activeBatches(tally),
      sessions_created_total: s.sessionsCreatedTotal,
      last_session_created_ms: wall(s.lastSessionCreatedMs),
    },
    creating: {
      state: creating.state,
      reason: creating.reason,
      next_attempt_ms: wall(creating.nextAttemptAt),
      last_attempt_ms: wall(s.creating.lastAttemptAt),
      cfs_trouble_since_ms: wall(troubleSince(s.creating)),
    },
    pacing: {
      pending_sessions: s.pacing.pendingSessions,
      pending_cap: s.pacingCaps.pendingSessionsCap,
      creates_per_minute_cap: s.pacingCaps.createsPerMinuteCap,
    },
    progress: { last_cfs_answer_ms: wall(s.creating.lastCfsAnswerAt) },
    completions_unwritten: completionsUnwritten(s),
  };
}

/** Components whose completion write is still to do. */
export function completionsUnwritten(s: BatcherState): number {
  let n = 0;
  for (const c of s.completions.values()) n += new Set(c.patches.map((p) => p.id)).size;
  return n;
}

export interface GaugeValues {
  queued: number;
  active: number;
  pending: number;
  backoffSeconds: number;
  disabled: 0 | 1;
  pendingSessions: number;
  pacingLimited: 0 | 1;
  completionsUnwritten: number;
}

export function gaugeValues(s: BatcherState, now: number): GaugeValues {
  const tally = s.book.tally();
  return {
    queued: tally.queued,
    active: activeBatches(tally),
    pending: s.pendingSeen,
    backoffSeconds: isBackingOff(s.backoff, now) ? s.backoff.currentS : 0,
    disabled: s.options.batcher_disable ? 1 : 0,
    pendingSessions: s.pacing.pendingSessions,
    pacingLimited: s.pacing.limited !== null ? 1 : 0,
    completionsUnwritten: completionsUnwritten(s),
  };
}

export function setGauges(m: BatcherMetrics, g: GaugeValues): void {
  m.batches.set({ state: 'queued' }, g.queued);
  m.batches.set({ state: 'active' }, g.active);
  m.pendingComponents.set(g.pending);
  m.backoffSeconds.set(g.backoffSeconds);
  m.disabled.set(g.disabled);
  m.pendingSessions.set(g.pendingSessions);
  m.pacingLimited.set(g.pacingLimited);
  m.completionsUnwritten.set(g.completionsUnwritten);
}
