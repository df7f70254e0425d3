/** What the main loop is built from and what it offers (loop.ts builds it; tests and benchmarks drive it). */
import type { Tuning } from './config';
import type { CfsApi, Clock, PhaseSteps, Sleep } from './context';
import type { CreateIntentStore } from './create-intents';
import type { HeartbeatWriter } from './heartbeat-writer';
import type { BatcherMetrics } from './metrics';
import type { BatcherState } from './state';

export interface BatcherDeps {
  client: CfsApi;
  /** Where to write the heartbeat (none when absent); ignored when `heartbeat` is given. */
  heartbeatPath?: string;
  /** A writer built beforehand over `state` (start.ts builds it first, so the client can stamp progress). */
  heartbeat?: HeartbeatWriter;
  state?: BatcherState;
  clock?: Clock;
  sleep?: Sleep;
  metrics?: BatcherMetrics;
  /** Jitter source in [0,1). */
  random?: () => number;
  newSessionName?: () => string;
  tuning?: Partial<Tuning>;
  phases?: PhaseSteps;
  /** The create-intents file (default: beside `heartbeatPath`, or memory only without one). */
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
