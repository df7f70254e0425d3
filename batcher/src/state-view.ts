/**
 * What the outside sees of the state record: the heartbeat body (with its `creating` line) and the gauges, pure
 * functions of the state and the time; and the heartbeat writer that reads the body from the state at each write.
 */
import type { CreatingState } from '@cfs-batcher/shared';
import { wallNow, type Clock } from './clock';
import { HeartbeatWriter, type HeartbeatBody } from './heartbeat-writer';
import type { BatcherMetrics } from './metrics';
import { backoffUntil, isBackingOff } from './rules/backoff';
import type { BookTally } from './rules/batch-registry';
import { uncertainCreating } from './rules/create-intents';
import { troubleSince } from './rules/creating';
import { longestRetrying, retryingWhat } from './rules/retrying-calls';
import { allowanceReason, pendingAllowed } from './rules/pacing';
import { foreignSummary, yieldText } from './rules/foreign';
import { msStamp, type BatcherState } from './state';

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
    cfs: cfsView(s, offset),
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
    pacing: pacingView(s),
    progress: { last_cfs_answer_ms: wall(s.creating.lastCfsAnswerAt) },
    completions_unwritten: completionsUnwritten(s),
  };
}

/**
 * The heartbeat's `cfs`: the last success, the last error and the call being retried now. While a call retries, its
 * failure is the last error (a cycle's error from before it is history, not what is going on).
 */
export function cfsView(s: BatcherState, offset: number): HeartbeatBody['cfs'] {
  const wall = (t: number): number => msStamp(t + offset);
  const r = longestRetrying(s.cfsRetrying);
  const cycleError = s.cfsLastError ? { ...s.cfsLastError, at_ms: wall(s.cfsLastError.at_ms) } : null;
  const retrying =
    r === null
      ? null
      : {
          method: r.method,
          route: r.route,
          answer: r.answer,
          attempts: r.attempts,
          since_ms: wall(r.since),
          until_ms: wall(r.until),
        };
  const retryError =
    r === null
      ? null
      : {
          at_ms: wall(r.since),
          kind: /^\d{3}$/.test(r.answer) ? 'http' : r.answer === 'timeout' ? 'timeout' : 'unreachable',
          message: `${retryingWhat(r)} (being retried: ${r.attempts} failed attempts so far)`,
        };
  const lastError =
    retryError !== null && (cycleError === null || retryError.at_ms >= cycleError.at_ms) ? retryError : cycleError;
  return {
    last_success_ms: s.cfsLastSuccess === null ? null : wall(s.cfsLastSuccess),
    last_error: lastError,
    retrying,
  };
}

/** The heartbeat's `pacing`: `pending_cap` is the allowance in force (0 = pacing off), the rest says why. */
export function pacingView(s: BatcherState): NonNullable<HeartbeatBody['pacing']> {
  const a = s.pacing.allowance;
  const on = s.pacingCaps.pendingSessionsCap > 0;
  return {
    pending_sessions: s.pacing.pendingSessions,
    pending_cap: on ? pendingAllowed(s.pacing, s.pacingCaps) : 0,
    creates_per_minute_cap: s.pacingCaps.createsPerMinuteCap,
    allowance: on
      ? {
          why: a.why,
          reason: allowanceReason(s.pacing, s.pacingCaps),
          ceiling: s.pacingCaps.pendingSessionsCap,
          last_start_s: a.lastStartMs === null ? null : round1(a.lastStartMs / 1000),
          oldest_pending_s: a.oldestPendingMs === null ? null : round1(a.oldestPendingMs / 1000),
        }
      : null,
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

export interface CreatingView {
  state: CreatingState;
  reason: string;
  /** Monotonic. */
  nextAttemptAt: number | null;
}

/** Pure: the heartbeat's `creating` line, most binding cause first. */
export function creatingView(s: BatcherState, now: number, tally: BookTally = s.book.tally()): CreatingView {
  const next = nextAttempt(s, now, tally.earliestAttemptAt);
  if (s.options.batcher_disable)
    return { state: 'disabled', reason: 'batcher_disable is true in the CFS options', nextAttemptAt: null };
  const held = uncertainCreating(0, s.intents.heldUntil, now);
  if (held !== null) return { ...held, nextAttemptAt: s.intents.heldUntil };
  if (isBackingOff(s.backoff, now)) {
    return {
      state: 'backoff',
      reason: `the 20 most recent sessions failed; creation halted for ${s.backoff.currentS} s`,
      nextAttemptAt: backoffUntil(s.backoff, now),
    };
  }
  const down = s.foreign.standingDown;
  if (down !== null)
    return {
      state: 'standing_down',
      reason: `another batcher is creating sessions (${foreignSummary(s.foreign)}): ${yieldText(down.why)}`,
      nextAttemptAt: null,
    };
  const t = s.creating.trouble.create ?? (s.completions.size > 0 ? s.creating.trouble.patch : null);
  if (t !== null)
    return { state: t.state, reason: `${t.what} (${t.count} time${t.count === 1 ? '' : 's'})`, nextAttemptAt: next };
  const uncertain = tally.uncertain;
  if (uncertain > 0)
    return { state: 'uncertain', reason: `${uncertain} session creates with an unknown outcome`, nextAttemptAt: next };
  if (s.pacing.limited !== null)
    return { state: 'paced', reason: s.pacing.limited.reason, nextAttemptAt: s.pacing.limited.until ?? next };
  if (tally.queued === 0 && s.completions.size === 0)
    return { state: 'idle', reason: 'nothing to send', nextAttemptAt: null };
  return { state: 'ok', reason: 'creating sessions as batches fill', nextAttemptAt: next };
}

/** The next cycle, or later when every waiting batch is held by its retry delay. */
function nextAttempt(s: BatcherState, now: number, earliest: number): number | null {
  if (earliest === Number.POSITIVE_INFINITY && s.completions.size === 0) return null;
  const cycle = s.nextCycleAt ?? now;
  // A batch held by its retry delay is still probed once a cycle while CFS is in trouble (phases/send/candidates.ts).
  return s.creating.trouble.create !== null || s.completions.size > 0 ? cycle : Math.max(cycle, earliest);
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
  /** The pending sessions allowed now; 0 when pacing on pending sessions is off. */
  pacingAllowance: number;
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
    pacingAllowance: s.pacingCaps.pendingSessionsCap > 0 ? pendingAllowed(s.pacing, s.pacingCaps) : 0,
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
  m.pacingAllowance.set(g.pacingAllowance);
  m.completionsUnwritten.set(g.completionsUnwritten);
}

/** The heartbeat writer over a state: its body is read from the state at each write (wall-clock epoch fields). */
export function stateHeartbeat(
  path: string | undefined,
  clock: Clock,
  state: BatcherState,
  metrics: BatcherMetrics,
): HeartbeatWriter {
  const wall = () => wallNow(clock);
  const body = (offset: number) => heartbeatBody(state, clock.now(), offset);
  return new HeartbeatWriter({
    path,
    wall,
    mono: () => clock.now(),
    startedAt: clock.now(),
    body,
    onFailure: () => metrics.heartbeatWriteFailures.inc(),
  });
}
