/**
 * The stall clock of the progress rule: how long schedulable work has waited in CFS with no batcher session created
 * or active. Pure: (previous clock, heartbeat, CFS view, now) -> next clock.
 *
 * Three kinds of event, kept apart so that nothing but progress can give a stalled loop a new deadline:
 * - a reset (the clock starts again from zero): a session created (the heartbeat's counter rose), or a new batcher
 *   instance (the restart is the remedy; the new instance gets its own deadline);
 * - a stop (no obligation, the clock is not running): a batcher session active in CFS, nothing pending in CFS,
 *   nothing the batcher can schedule (two collections in a row saw none), batcher_disable, the 20-failures back-off,
 *   standing down for another batcher (a restart cannot end it; the batcher's own alert reports it);
 * - a pause (the clock keeps its value but does not advance): the sidecar cannot see CFS right now, the batcher waits
 *   on CFS, or it reports CFS trouble and was seen trying recently. CFS's trouble never ages the clock, and never
 *   resets it either: a flaky CFS cannot keep a useless loop alive.
 * Timestamps in the heartbeat are never read as progress: the batcher re-derives them at every write and they move
 * by a millisecond from write to write.
 */
import type { Heartbeat } from '@cfs-batcher/shared';
import { TROUBLE_STATES, heartbeatExt } from './heartbeat-ext';
import type { CfsObservation, InstanceTrack, Now } from './history';

/** Why a running clock went back to zero (the label of `cfs_batcher_health_progress_clock_resets_total`). */
export const CLOCK_RESET_REASONS = [
  'session_created',
  'new_instance',
  'session_active',
  'nothing_pending',
  'nothing_schedulable',
  'disabled',
  'backoff',
  'standing_down',
] as const;
export type ClockResetReason = (typeof CLOCK_RESET_REASONS)[number];
type StopReason = Exclude<ClockResetReason, 'session_created' | 'new_instance'>;

export const CLOCK_PAUSE_REASONS = ['cfs_unknown', 'batcher_waiting_for_cfs', 'cfs_trouble'] as const;
export type ClockPauseReason = (typeof CLOCK_PAUSE_REASONS)[number];

export interface StallClock {
  /** Stall time counted so far (pauses excluded); null while the clock is stopped. */
  stallMs: number | null;
  /** Time paused in the current run (CFS trouble), for /status. */
  excusedMs: number;
  /** When the current run began (sidecar monotonic clock); null while stopped. */
  runSinceMono: number | null;
  lastTickMono: number | null;
  pausedBy: ClockPauseReason | null;
  stoppedBy: StopReason | null;
  lastReset: { reason: ClockResetReason; atMono: number } | null;
  /** Resets of a running clock since the sidecar started, by reason (the metric's source). */
  resets: Record<ClockResetReason, number>;
  instanceId: string | null;
  sessionsCreatedTotal: number | null;
  /** The heartbeat cycle at which pending_seen was first seen 0 in a row (null: it is not 0). */
  zeroPendingSinceCycle: number | null;
}

/** What the clock may use of CFS: a fresh successful round, or null when the sidecar cannot tell right now. */
export type StallCfs = CfsObservation | null;

export interface StallInput {
  hb: Heartbeat | null;
  track: InstanceTrack | null;
  cfs: StallCfs;
  now: Now;
  /** Added to 2 x the live check interval: how long a batcher claiming CFS trouble may go without trying. */
  tryingMarginMs: number;
}

/** Pure: how long the batcher may go without trying CFS while it claims CFS trouble (2 x live interval + margin). */
export function tryingLimitFor(hb: Heartbeat, tryingMarginMs: number): number {
  return 2 * hb.options.batcher_check_interval * 1000 + tryingMarginMs;
}

export function initialStallClock(): StallClock {
  return {
    stallMs: null,
    excusedMs: 0,
    runSinceMono: null,
    lastTickMono: null,
    pausedBy: null,
    stoppedBy: null,
    lastReset: null,
    resets: Object.fromEntries(CLOCK_RESET_REASONS.map((r) => [r, 0])) as Record<ClockResetReason, number>,
    instanceId: null,
    sessionsCreatedTotal: null,
    zeroPendingSinceCycle: null,
  };
}

/** Collections in a row that must see nothing schedulable before pending records count as not the batcher's. */
const ZERO_PENDING_CYCLES = 2;

/** Pure: why the batcher has nothing to do about pending work right now, or null. */
function stopReason(hb: Heartbeat, cfs: StallCfs, zeroSince: number | null): StopReason | null {
  if (hb.disabled) return 'disabled';
  if (hb.backoff.active || hb.phase === 'backoff') return 'backoff';
  if (hb.phase === 'standing_down' || heartbeatExt(hb).creating?.state === 'standing_down') return 'standing_down';
  if (cfs?.activeSession) return 'session_active';
  if (cfs && cfs.pendingComponents !== true) return 'nothing_pending';
  if (zeroSince !== null && hb.cycle - zeroSince >= ZERO_PENDING_CYCLES) return 'nothing_schedulable';
  return null;
}

/**
 * Pure: why pending work may wait right now without ageing the clock (CFS's trouble), or null. The batcher's own
 * report needs a try the sidecar saw recently; an older batcher without `creating` is judged by its CFS errors.
 */
function pauseReason(i: StallInput): ClockPauseReason | null {
  const { hb, track, cfs, now } = i;
  if (!hb) return null;
  if (hb.phase === 'waiting_for_cfs') return 'batcher_waiting_for_cfs';
  const creating = heartbeatExt(hb).creating;
  const seen = creating ? (track?.attemptSeenMono ?? null) : (track?.errorSeenMono ?? null);
  const claims = creating ? TROUBLE_STATES.has(creating.state) : seen !== null;
  if (claims && seen !== null && now.monoMs - seen <= tryingLimitFor(hb, i.tryingMarginMs)) return 'cfs_trouble';
  return cfs === null ? 'cfs_unknown' : null;
}

export function observeStall(prev: StallClock, i: StallInput): StallClock {
  const { hb, now } = i;
  if (!hb) return { ...prev, stallMs: null, runSinceMono: null, lastTickMono: now.monoMs, pausedBy: null };
  const sameInstance = prev.instanceId === hb.instance_id;
  const zeroSince =
    hb.counters.pending_seen > 0 ? null : sameInstance ? (prev.zeroPendingSinceCycle ?? hb.cycle) : hb.cycle;
  const resetBy: ClockResetReason | null =
    prev.instanceId !== null && !sameInstance
      ? 'new_instance'
      : sameInstance &&
          prev.sessionsCreatedTotal !== null &&
          hb.counters.sessions_created_total > prev.sessionsCreatedTotal
        ? 'session_created'
        : null;
  const stop = stopReason(hb, i.cfs, zeroSince);
  const pause = pauseReason(i);
  const running = prev.stallMs !== null;
  const elapsed = running && prev.lastTickMono !== null ? Math.max(0, now.monoMs - prev.lastTickMono) : 0;
  const base = {
    ...prev,
    instanceId: hb.instance_id,
    sessionsCreatedTotal: hb.counters.sessions_created_total,
    zeroPendingSinceCycle: zeroSince,
    lastTickMono: now.monoMs,
  };
  const counted = (reason: ClockResetReason): Pick<StallClock, 'lastReset' | 'resets'> =>
    running
      ? { lastReset: { reason, atMono: now.monoMs }, resets: { ...prev.resets, [reason]: prev.resets[reason] + 1 } }
      : { lastReset: prev.lastReset, resets: prev.resets };
  if (stop !== null) {
    return {
      ...base,
      ...counted(stop),
      stallMs: null,
      excusedMs: 0,
      runSinceMono: null,
      pausedBy: null,
      stoppedBy: stop,
    };
  }
  // Only a successful CFS round can start the clock: it must show pending work first.
  if (!running && i.cfs === null) return { ...base, pausedBy: pause, stoppedBy: prev.stoppedBy };
  if (!running || resetBy !== null) {
    return {
      ...base,
      ...(resetBy !== null ? counted(resetBy) : {}),
      stallMs: 0,
      excusedMs: 0,
      runSinceMono: now.monoMs,
      pausedBy: pause,
      stoppedBy: null,
    };
  }
  // The interval since the last tick is judged by what was known at its start.
  const excused = prev.pausedBy !== null;
  return {
    ...base,
    stallMs: (prev.stallMs ?? 0) + (excused ? 0 : elapsed),
    excusedMs: prev.excusedMs + (excused ? elapsed : 0),
    pausedBy: pause,
    stoppedBy: null,
  };
}
