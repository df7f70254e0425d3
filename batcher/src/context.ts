/**
 * What a phase works with: the state, the CFS port, the metrics, the tuning and the clock. A phase is a function
 * `(ctx, signal) => Promise<void>`; the loop (loop.ts) decides their order, waits and error policy.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Phase } from '@cfs-batcher/shared';
import type { CfsApi } from './cfs-port';
import type { Clock } from './clock';
import type { Tuning } from './config';
import type { BatcherMetrics } from './metrics';
import type { BatcherState } from './state';

export type { Clock } from './clock';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface PhaseContext {
  /** Everything the batcher knows between cycles (the book, the intents store, ...). */
  readonly state: BatcherState;
  /** CFS, with attempts and answers noted (cfs-port.ts). */
  readonly client: CfsApi;
  readonly metrics: BatcherMetrics;
  readonly tuning: Readonly<Tuning>;
  readonly clock: Clock;
  /** Waits inside a phase (send waiting for the operator); the loop's own sleep, so tests can inject it. */
  readonly sleep: Sleep;
  readonly newSessionName: () => string;
}

export type PhaseFn = (ctx: PhaseContext, signal?: AbortSignal) => Promise<void>;

export interface PhaseStep {
  /** The heartbeat phase stamped before it runs. */
  readonly name: Phase;
  readonly span: string;
  readonly run: PhaseFn;
  /** Skipped while the `batcher_disable` option is true. */
  readonly skipWhenDisabled?: boolean;
}

/** `rebuild` runs until it has succeeded once (its own root span); `cycle` runs in order every cycle. */
export interface PhaseSteps {
  readonly rebuild: PhaseStep;
  readonly cycle: readonly PhaseStep[];
}

/** Waits `ms`, or until `signal` aborts: an abort ends the wait early, it is not an error (the loop checks it). */
export const realSleep: Sleep = async (ms, signal) => {
  try {
    await delay(Math.max(0, ms), undefined, { signal });
  } catch (err) {
    if (!signal?.aborted) throw err; // the AbortError of an abort; anything else is a bug
  }
};
