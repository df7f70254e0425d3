/**
 * Which batches the send phase may create now: the ready ones in book order, then the ones held by a create-retry
 * delay that may go early (retryTurn). Uncertain batches are not here: resolveUncertain (uncertain.ts) looks them up
 * every cycle, and their name is the idempotency key, so a repeated POST can never make a second session.
 */
import type { PhaseContext } from '../../context';
import { isReadyToSend, retryDelayMs, type Batch } from '../../rules/batch';

export interface Candidate {
  b: Batch;
  probe: boolean;
  /** The time its readiness is judged at (a held batch: when its retry delay ends). */
  at: number;
}

/** Ready batches, then held ones that may go early: as probes while creates are failing, all once one succeeded. */
export function candidates(ctx: PhaseContext): Candidate[] {
  const { state, clock } = ctx;
  const { batch_size: size, batch_window: window } = state.options;
  const now = clock.now();
  const all = state.book.all();
  const ready = all.filter((b) => isReadyToSend(b, size, window, now));
  const held = all
    .filter((b) => b.nextAttemptAt > now && isReadyToSend(b, size, window, b.nextAttemptAt))
    .map((b) => ({ b, turn: retryTurn(ctx, b, now) }))
    .filter((x) => x.turn !== null)
    .sort((x, y) => x.b.nextAttemptAt - y.b.nextAttemptAt);
  return [
    ...ready.map((b) => ({ b, probe: false, at: now })),
    ...held.map(({ b, turn }) => ({ b, probe: turn === 'probe', at: b.nextAttemptAt })),
  ];
}

/**
 * May this batch, held by its create-retry delay, be tried now anyway? 'probe' while creates are failing (the
 * caller allows one per phase: the batcher keeps trying at least once per check interval, which the sidecar reads as
 * CFS trouble, not a stalled loop); 'recovered' once a create has succeeded after the batch's last failure (all work
 * resumes within one cycle of CFS recovering). Never sooner after the batch's last failure than min(first retry
 * delay, one check interval). Its own delay over: 'due'.
 */
export function retryTurn(ctx: PhaseContext, b: Batch, now: number): 'due' | 'probe' | 'recovered' | null {
  if (now >= b.nextAttemptAt) return 'due';
  if (b.createFailures === 0) return null;
  const { state, tuning } = ctx;
  const failedAt = b.nextAttemptAt - retryDelayMs(b.createFailures, tuning);
  if (now - failedAt < Math.min(tuning.createRetryInitialMs, state.options.batcher_check_interval * 1000)) return null;
  const recovered = state.creating.recoveredAt;
  if (recovered !== null && failedAt <= recovered) return 'recovered';
  return state.creating.trouble.create !== null ? 'probe' : null;
}
