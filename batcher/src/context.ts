/**
 * What a phase works with: the state, the CFS port, the metrics, the tuning and the clock. A phase is a function
 * `(ctx, signal) => Promise<void>`; the loop (loop.ts) decides their order, waits and error policy.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { CfsClient, Phase } from '@cfs-batcher/shared';
import type { Clock } from './clock';
import type { Tuning } from './config';
import type { CreateIntentStore } from './create-intents';
import type { BatcherMetrics } from './metrics';
import type { BatcherState } from './state';

/** The part of the CFS client the batcher uses (tests pass wrappers that lose or hide answers). */
export type CfsApi = Pick<
  CfsClient,
  | 'listComponents'
  | 'listSessions'
  | 'listAllSessions'
  | 'getSession'
  | 'createSession'
  | 'deleteSession'
  | 'getOptions'
  | 'patchOptions'
  | 'patchComponent'
>;

export type { Clock } from './clock';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface PhaseContext {
  readonly state: BatcherState;
  readonly client: CfsApi;
  readonly metrics: BatcherMetrics;
  readonly tuning: Readonly<Tuning>;
  readonly clock: Clock;
  /** Waits inside a phase (send waiting for the operator); the loop's own sleep, so tests can inject it. */
  readonly sleep: Sleep;
  readonly newSessionName: () => string;
  /** The create-intents file on the heartbeat volume (send records, rebuild restores). */
  readonly intents: CreateIntentStore;
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
