/** What the main loop is built from and what it offers (loop.ts builds it; tests and benchmarks drive it). */
import type { CfsApi, CfsPortBuilder } from './cfs-port';
import type { Tuning } from './config';
import type { Clock, PhaseSteps, Sleep } from './context';
import type { CreateIntentStore } from './create-intents';
import type { HeartbeatWriter } from './heartbeat-writer';
import type { BatcherMetrics } from './metrics';
import type { BatcherState } from './state';

export interface BatcherDeps {
  /**
   * CFS. Progress has one wire, createBatcher's: every CFS answer to the loop notes `creating.lastCfsAnswerAt` and
   * stamps the heartbeat (throttled). A builder is handed the loop's request hook (production: every HTTP attempt,
   * retries included, is progress and is counted in the request metrics); a ready-made port (a test's wrapper) has
   * each call's answer sent down the same wire instead.
   */
  client: CfsApi | CfsPortBuilder;
  /** Where to write the heartbeat (none when absent). */
  heartbeatPath?: string;
  /** The state record (default: a new one, holding `intents`). */
  state?: BatcherState;
  clock?: Clock;
  sleep?: Sleep;
  metrics?: BatcherMetrics;
  /** Jitter source in [0,1). */
  random?: () => number;
  newSessionName?: () => string;
  tuning?: Partial<Tuning>;
  phases?: PhaseSteps;
  /**
   * The create-intents file (default: beside `heartbeatPath`, or memory only without one); ignored when `state` is
   * given (the state record holds its store).
   */
  intents?: CreateIntentStore;
}

export interface CycleResult {
  outcome: 'ok' | 'error';
  durationMs: number;
  pendingSeen: number;
  sessionsCreated: number;
  sessionsCompleted: number;
  error?: unknown;
}

export interface Batcher {
  readonly state: BatcherState;
  readonly metrics: BatcherMetrics;
  readonly heartbeat: HeartbeatWriter;
  /** One cycle; CFS failures give outcome 'error', a bug throws (after logging 'Unexpected error occurred'). */
  runCycle(signal?: AbortSignal): Promise<CycleResult>;
  /** Cycles until `signal` aborts; CFS outages become waits; anything else is fatal (throws). */
  run(signal: AbortSignal): Promise<void>;
}
