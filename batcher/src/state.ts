/**
 * What the batcher knows between cycles: one mutable record, owned by the loop and written by the phases. Each fact
 * has one home: batches and who holds which component in the book, the create-intents file and its hold in the
 * intents store, attempts and CFS answers in `creating`. What the outside sees of it (heartbeat body, gauges) is
 * state-view.ts. This module depends on nothing above it: rules, the intents store and the shared types.
 */
import type { CfsError, ComponentPatch } from '@cfs-batcher/shared';
import { CreateIntentStore } from './create-intents';
import { initialBackoff, type BackoffState } from './rules/backoff';
import type { RetryPolicy } from './rules/batch';
import { BatchBook } from './rules/batch-book';
import { initialCreating, type CreatingTrack } from './rules/creating';
import type { RetryingCalls } from './rules/retrying-calls';
import { InternPool } from './rules/intern';
import { initialForeign, type ForeignState } from './rules/foreign';
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
  lastCycle: LastCycle | null;
  cfsLastSuccess: number | null;
  cfsLastError: CfsLastError | null;
  /** The CFS calls being retried right now (rules/retrying-calls.ts). */
  readonly cfsRetrying: RetryingCalls;
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
  /** The create-intents file on the heartbeat volume, and the hold on creates it sets when unusable at start. */
  readonly intents: CreateIntentStore;
  /**
   * This CFS answered the lean component listing with an error the full one did not give (the real server drops
   * `state` from each record when state_details=false, so a record stored without it fails the list): collect reads
   * full records from then on (phases/collect-source.ts).
   */
  leanListingRefused: boolean;
  /** Other batchers' sessions seen in CFS, and whether this one stands down (rules/foreign.ts). */
  readonly foreign: ForeignState;
}

/** `intents`: the store (default: memory only, e.g. tests without a volume). */
export function newState(
  retry?: RetryPolicy & Partial<PacingCaps>,
  intents: CreateIntentStore = new CreateIntentStore(undefined),
  startWallMs: number = Date.now(),
): BatcherState {
  return {
    options: { ...DEFAULT_OPTIONS },
    backoff: initialBackoff(),
    rebuilt: false,
    cycles: 0,
    sessionsCreatedTotal: 0,
    lastSessionCreatedMs: null,
    pendingSeen: 0,
    collectStartedAt: 0,
    lastCycle: null,
    cfsLastSuccess: null,
    cfsLastError: null,
    cfsRetrying: new Map(),
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
    intents,
    leanListingRefused: false,
    foreign: initialForeign(startWallMs),
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
