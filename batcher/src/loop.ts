/**
 * The main loop: the order of the phases, the waits between cycles, and the error policy. A CFS failure ends the
 * cycle and becomes a wait (waiting_for_cfs, doubling); anything else is a bug: logged as 'Unexpected error
 * occurred' and thrown, so the process exits and restarts (crash-only). The heartbeat is stamped here, by the loop
 * itself, at each phase change and while waiting: a dead, stopped or blocked loop stops it.
 *
 * `createBatcher()` takes the client, clock and sleep as parameters so tests and benchmarks can drive single cycles
 * (`runCycle()`) against the simulator without waiting real intervals; `run(signal)` is the production loop. It
 * builds the heartbeat writer over the state and owns the one wire that turns CFS answers into progress.
 */
import { errorMessage, isCfsError, withSpan, type Phase } from '@cfs-batcher/shared';
import type { Batcher, BatcherDeps, CycleResult } from './batcher-types';
import { trackAttempts } from './cfs-port';
import { monotonicClock, wallNow } from './clock';
import { DEFAULT_TUNING, type Tuning } from './config';
import { realSleep, type PhaseContext, type PhaseStep } from './context';
import { CreateIntentStore, intentsPathFor } from './create-intents';
import { logBatch, logCfsError, logComponents, logMain, logOptions, logSessions } from './log';
import { createMetrics } from './metrics';
import { PHASE_STEPS } from './phases';
import { noteDisableToggle, optionsChange } from './options-watch';
import { isBackingOff } from './rules/backoff';
import { noteCfsAnswer } from './rules/creating';
import { noteCallState } from './rules/retrying-calls';
import { sessionNameFor } from './rules/foreign';
import { ATTR, SPAN } from './spans';
import { msStamp, newState, noteCfsError } from './state';
import { gaugeValues, setGauges, stateHeartbeat } from './state-view';

export type { Batcher, BatcherDeps, CycleResult } from './batcher-types';

/** A bug or an impossible state: the process must exit and restart (crash-only). */
export class FatalError extends Error {
  override name = 'FatalError';
}

/** Which logger reports a CFS failure in each phase (the original's module names). */
const PHASE_LOGGER: Partial<Record<Phase, typeof logMain>> = {
  rebuild: logSessions,
  options: logOptions,
  check_status: logSessions,
  collect: logComponents,
  send: logSessions,
};

export function createBatcher(deps: BatcherDeps): Batcher {
  const clock = deps.clock ?? monotonicClock();
  const sleep = deps.sleep ?? realSleep;
  const random = deps.random ?? Math.random;
  const tuning: Tuning = { ...DEFAULT_TUNING, ...deps.tuning };
  const metrics = deps.metrics ?? createMetrics({ defaultMetrics: false });
  const state =
    deps.state ??
    newState(tuning, deps.intents ?? new CreateIntentStore(intentsPathFor(deps.heartbeatPath)), wallNow(clock));
  const heartbeat = stateHeartbeat(deps.heartbeatPath, clock, state, metrics);
  const phases = deps.phases ?? PHASE_STEPS;
  // The one progress wire: a CFS answer means the loop is getting somewhere (the heartbeat's `progress`, and a
  // throttled stamp so a long working phase is not mistaken for a hang; a stopped or blocked loop stops stamping).
  const answered = (): void => {
    noteCfsAnswer(state.creating, clock.now());
    heartbeat.progress();
  };
  // A built port reports every HTTP attempt (and its request metrics); a ready-made one each call, per call.
  const port =
    typeof deps.client === 'function'
      ? deps.client(
          (r) => {
            metrics.observeRequest(r);
            answered();
          },
          (c) => noteCallState(state.cfsRetrying, c, clock.now()),
        )
      : deps.client;
  const perCall = typeof deps.client === 'function' ? undefined : answered;
  const ctx: PhaseContext = {
    state,
    // Creates, lookups and PATCHes are noted as attempts (the heartbeat's `creating`).
    client: trackAttempts(port, state.creating, () => clock.now(), perCall),
    metrics,
    tuning,
    clock,
    sleep,
    newSessionName: deps.newSessionName ?? (() => sessionNameFor(state.foreign.instanceId)),
  };

  async function runPhase(step: PhaseStep, signal?: AbortSignal): Promise<void> {
    await heartbeat.stamp(step.name);
    await withSpan(step.span, {}, () => step.run(ctx, signal));
    noteDisableToggle(state);
  }

  async function runCycle(signal?: AbortSignal): Promise<CycleResult> {
    const start = clock.now();
    state.nextCycleAt = null;
    state.cycleCreated = 0;
    state.cycleCompleted = 0;
    let failed: unknown;
    let phase: Phase = 'rebuild';
    try {
      if (!state.rebuilt) await runPhase(phases.rebuild, signal);
      await withSpan(SPAN.cycle, { [ATTR.cycleSeq]: state.cycles + 1 }, async () => {
        for (const step of phases.cycle) {
          if (step.skipWhenDisabled && state.options.batcher_disable) continue;
          phase = step.name;
          await runPhase(step, signal);
        }
        const problem = state.book.inconsistency();
        if (problem !== null) throw new FatalError(problem);
      });
      state.cfsLastSuccess = clock.now();
    } catch (err) {
      if (!isCfsError(err)) {
        logMain.error('Unexpected error occurred', {
          stack: err instanceof Error ? err.stack : undefined,
          error: errorMessage(err),
        });
        finishCycle(start, 'error', err);
        await heartbeat.stamp();
        throw err;
      }
      failed = err;
      if (err.kind !== 'aborted') {
        logCfsError(PHASE_LOGGER[phase] ?? logMain, err);
        noteCfsError(state, err, clock.now());
      }
    }
    const result = finishCycle(start, failed === undefined ? 'ok' : 'error', failed);
    await heartbeat.stamp();
    return result;
  }

  function finishCycle(start: number, outcome: 'ok' | 'error', err?: unknown): CycleResult {
    const end = clock.now();
    const durationMs = Math.max(0, end - start);
    state.cycles += 1;
    state.lastCycle = {
      completed_at_ms: msStamp(end),
      duration_ms: durationMs,
      outcome,
      ...(err !== undefined ? { error: errorMessage(err).slice(0, 500) } : {}),
    };
    metrics.cycles.inc({ outcome });
    metrics.cycleDuration.observe(durationMs / 1000);
    if (outcome === 'ok') metrics.lastSuccessfulCycle.set(wallNow(clock) / 1000);
    setGauges(metrics, gaugeValues(state, end));
    return {
      outcome,
      durationMs,
      pendingSeen: state.pendingSeen,
      sessionsCreated: state.cycleCreated,
      sessionsCompleted: state.cycleCompleted,
      ...(err !== undefined ? { error: err } : {}),
    };
  }

  /**
   * Sleeps `ms` in steps of at most waitStepMs (<= 1 s), stamping the heartbeat after each, so the sidecar sees the
   * loop alive in every phase. While sleeping, the options are re-read (at most every optionsRefreshMs) and the sleep
   * ends early when the interval got shorter or batcher_disable changed. Time is the monotonic clock; the step
   * count is bounded by `ms`, so an injected sleep that does not advance time cannot spin.
   */
  async function wait(phase: Phase, ms: number, signal: AbortSignal): Promise<void> {
    await heartbeat.stamp(phase);
    const step = Math.max(1, tuning.waitStepMs);
    const start = clock.now();
    state.nextCycleAt = start + ms;
    let lastRead = start;
    const maxSteps = Math.ceil(ms / step) + 1;
    for (let i = 0; i < maxSteps && !signal.aborted; i++) {
      const left = start + ms - clock.now();
      if (left <= 0) break;
      await sleep(Math.min(step, left), signal);
      if (signal.aborted) break;
      // Between cycles (sleep, or the backoff label of the same sleep), not while CFS is failing anyway.
      if (phase !== 'waiting_for_cfs' && clock.now() - lastRead >= tuning.optionsRefreshMs) {
        lastRead = clock.now();
        const why = await optionsChange(ctx.client, state.options, signal);
        if (why !== null) {
          logOptions.info(`${why}; ending the sleep early`);
          break;
        }
      }
      await heartbeat.stamp(phase);
    }
  }

  async function run(signal: AbortSignal): Promise<void> {
    await heartbeat.stamp('starting');
    let cfsDelay = tuning.cfsWaitInitialMs;
    while (!signal.aborted) {
      const result = await runCycle(signal);
      if (signal.aborted) break;
      if (result.outcome === 'error') {
        if (!state.rebuilt) logBatch.warn('Rebuilding state was interrupted. Trying again...');
        logMain.info('Waiting for CFS to become available');
        const delay = Math.round(cfsDelay * (0.5 + random() / 2));
        // Doubling, but never past one check interval: a few requests per interval cannot flood CFS, and the
        // batcher resumes within one cycle of CFS coming back.
        const cap = Math.max(
          tuning.cfsWaitInitialMs,
          Math.min(tuning.cfsWaitMaxMs, state.options.batcher_check_interval * 1000),
        );
        cfsDelay = Math.min(cap, cfsDelay * 2);
        await wait('waiting_for_cfs', delay, signal);
        continue;
      }
      cfsDelay = tuning.cfsWaitInitialMs;
      const phase: Phase = isBackingOff(state.backoff, clock.now())
        ? 'backoff'
        : state.foreign.standingDown !== null
          ? 'standing_down'
          : 'sleep';
      await wait(phase, state.options.batcher_check_interval * 1000, signal);
    }
    await heartbeat.stamp('stopping');
  }

  return { state, metrics, heartbeat, runCycle, run };
}
