/**
 * What the batcher knows between cycles (one mutable record, owned by the loop and written by the phases), and what
 * the outside sees of it: the heartbeat body and the gauges, both pure functions of the state and the time.
 */
import type { CfsError } from '@cfs-batcher/shared';
import type { HeartbeatBody } from './heartbeat-writer';
import type { BatcherMetrics } from './metrics';
import { backoffUntil, initialBackoff, isBackingOff, type BackoffState } from './rules/backoff';
import type { RetryPolicy } from './rules/batch';
import { BatchBook } from './rules/batch-book';
import { InternPool } from './rules/intern';
import { DEFAULT_OPTIONS, newOptionsMemory, type BatcherOptions, type OptionsMemory } from './rules/options';

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
  readonly book: BatchBook;
  /** Shares repeated values between component snapshots (see rules/intern.ts); a new generation every collection. */
  readonly pool: InternPool;
}

export function newState(retry?: RetryPolicy): BatcherState {
  return {
    options: { ...DEFAULT_OPTIONS },
    backoff: initialBackoff(),
    rebuilt: false,
    cycles: 0,
    sessionsCreatedTotal: 0,
    lastSessionCreatedMs: null,
    pendingSeen: 0,
    lastCycle: null,
    cfsLastSuccess: null,
    cfsLastError: null,
    optionsMemory: newOptionsMemory(),
    optionProblems: new Set(),
    rejectedComponents: new Map(),
    cycleCreated: 0,
    cycleCompleted: 0,
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

function activeBatches(s: BatcherState): number {
  return s.book.count('active') + s.book.count('uncertain');
}

export function heartbeatBody(s: BatcherState, now: number): HeartbeatBody {
  const active = isBackingOff(s.backoff, now);
  return {
    cycle: s.cycles,
    last_cycle: s.lastCycle,
    options: {
      batcher_check_interval: s.options.batcher_check_interval,
      batch_window: s.options.batch_window,
      batch_size: s.options.batch_size,
      batcher_pending_timeout: s.options.batcher_pending_timeout,
    },
    disabled: s.options.batcher_disable,
    backoff: { active, seconds: active ? s.backoff.currentS : 0, until_ms: backoffUntil(s.backoff, now) },
    cfs: { last_success_ms: s.cfsLastSuccess, last_error: s.cfsLastError },
    counters: {
      pending_seen: s.pendingSeen,
      batches_queued: s.book.count('queued'),
      batches_active: activeBatches(s),
      sessions_created_total: s.sessionsCreatedTotal,
      last_session_created_ms: s.lastSessionCreatedMs,
    },
  };
}

export interface GaugeValues {
  queued: number;
  active: number;
  pending: number;
  backoffSeconds: number;
  disabled: 0 | 1;
}

export function gaugeValues(s: BatcherState, now: number): GaugeValues {
  return {
    queued: s.book.count('queued'),
    active: activeBatches(s),
    pending: s.pendingSeen,
    backoffSeconds: isBackingOff(s.backoff, now) ? s.backoff.currentS : 0,
    disabled: s.options.batcher_disable ? 1 : 0,
  };
}

export function setGauges(m: BatcherMetrics, g: GaugeValues): void {
  m.batches.set({ state: 'queued' }, g.queued);
  m.batches.set({ state: 'active' }, g.active);
  m.pendingComponents.set(g.pending);
  m.backoffSeconds.set(g.backoffSeconds);
  m.disabled.set(g.disabled);
}
