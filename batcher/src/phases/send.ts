/**
 * Phase `send` (CFS sessions, every cycle unless disabled or backing off): creates a session for each ready batch.
 * The batch's transitions (uncertain, retry delay, active, requeued) are the book's (rules/batch-book.ts).
 */
import { isCfsError, withSpan, type SessionCreate } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logBatch, logCfsError, logSessions } from '../log';
import { isBackingOff } from '../rules/backoff';
import { noteCreate, pacingGate } from '../rules/pacing';
import { isReadyToSend, retryDelayMs, sharedTags, type Batch } from '../rules/batch';
import { certainlyNotCreated, createFailureReason } from '../rules/cfs-errors';
import { SPAN, sessionSpanAttributes } from '../spans';
import { msStamp, noteCfsError } from '../state';

/**
 * The outer loop over ready batches: stops after the send time slice (the rest go next cycle, so no phase is
 * unbounded by design) or when pacing holds creation (rules/pacing.ts). While CFS is in trouble, batches held by
 * their retry delay are tried too (see candidates): the batcher keeps trying at least once per check interval (the
 * sidecar reads that as CFS trouble, not a stalled loop) and resumes within one interval when CFS recovers.
 */
export async function send(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state, clock } = ctx;
  const wasPaced = state.pacing.limited;
  state.pacing.limited = null;
  if (isBackingOff(state.backoff, clock.now())) return;
  logBatch.debug('Sending completed batches');
  const sliceEnd = clock.now() + ctx.tuning.sendSliceMs;
  let sent = 0;
  for (const { b, probe } of candidates(ctx)) {
    const now = clock.now();
    if (now >= sliceEnd) {
      logBatch.info(`Send time slice of ${ctx.tuning.sendSliceMs} ms used; the remaining batches are sent next cycle`);
      break;
    }
    const limit = pacingGate(state.pacing, state.pacingCaps, now);
    if (limit !== null) {
      state.pacing.limited = limit;
      if (wasPaced?.why !== limit.why) logBatch.info(`Pacing session creation: ${limit.reason}`);
      break;
    }
    // Re-checked: an earlier send may have changed it; a probe (retry delay not yet over) passes.
    if (!isReadyToSend(b, state.options.batch_size, state.options.batch_window, Math.max(now, b.nextAttemptAt))) continue;
    const troubleBefore = state.creating.trouble.create;
    const r = await sendBatch(ctx, b, signal);
    if (r === 'sent') {
      sent += 1;
      noteCreate(state.pacing, clock.now());
    }
    // A probe that met CFS trouble again ends the phase (a 404 lookup, which requeues, is no trouble).
    const failedAgain = state.creating.trouble.create !== null && state.creating.trouble.create !== troubleBefore;
    if (r === 'stop' || (probe && failedAgain)) break;
  }
  if (sent > 0) logBatch.info(`Successfully submitted ${sent} batches for configuration`);
}

/**
 * Ready batches in book order, then batches held by a retry delay, due first first: while creates are failing, as
 * probes (the first failure ends the phase: one extra try per cycle, not a flood); once a create has succeeded
 * again, every batch whose delay was earned before that, so all work resumes within one cycle of CFS recovering.
 * A probe never comes sooner after a batch's last failure than min(first retry delay, one check interval): an
 * uncertain create is not looked up earlier than that (a late commit has that long to land, as before).
 */
function candidates(ctx: PhaseContext): { b: Batch; probe: boolean }[] {
  const { state, clock } = ctx;
  const { batch_size: size, batch_window: window } = state.options;
  const now = clock.now();
  const ready = state.book.all().filter((b) => isReadyToSend(b, size, window, now));
  const probing = state.creating.trouble.create !== null;
  const recovered = state.creating.recoveredAt;
  const minAge = Math.min(ctx.tuning.createRetryInitialMs, state.options.batcher_check_interval * 1000);
  const held = state.book
    .all()
    .filter((b) => b.nextAttemptAt > now && b.createFailures > 0 && isReadyToSend(b, size, window, b.nextAttemptAt))
    .filter((b) => now - failedAt(b, ctx) >= minAge)
    .filter((b) => probing || (recovered !== null && failedAt(b, ctx) <= recovered))
    .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt);
  return [...ready.map((b) => ({ b, probe: false })), ...held.map((b) => ({ b, probe: probing }))];
}

/** When the batch's last create failed (its retry delay counts from then). */
function failedAt(b: Batch, ctx: PhaseContext): number {
  return b.nextAttemptAt - retryDelayMs(b.createFailures, ctx.tuning);
}

function adopted(ctx: PhaseContext, b: Batch, name: string): void {
  const { state } = ctx;
  const now = ctx.clock.now();
  state.book.markActive(b, name, now);
  state.sessionsCreatedTotal += 1;
  state.cycleCreated += 1;
  state.lastSessionCreatedMs = msStamp(now);
  ctx.metrics.sessionsCreated.inc();
}

/** 'sent' | 'failed' (this batch only) | 'stop' (CFS in trouble: send nothing more this cycle). */
async function sendBatch(ctx: PhaseContext, b: Batch, signal?: AbortSignal): Promise<'sent' | 'failed' | 'stop'> {
  const { state, clock } = ctx;
  let name: string | undefined;
  if (b.uncertainName !== null) {
    // An earlier POST may have created it: look before creating again, so no duplicate targets these nodes.
    name = b.uncertainName;
    try {
      await ctx.client.getSession(name, { signal });
      logSessions.info(`Session ${name} exists from an earlier attempt; tracking it`);
      adopted(ctx, b, name);
      return 'sent';
    } catch (err) {
      if (!isCfsError(err) || err.kind === 'aborted') throw err;
      if (!err.isNotFound) {
        logCfsError(logSessions, err);
        noteCfsError(state, err, clock.now());
        state.book.retryLater(b, clock.now());
        return 'stop';
      }
      // Confirmed absent. Its members were held busy (not refreshed) while uncertain: let the next collect
      // refresh, move or drop them before anything is created, so no session goes out with stale members.
      state.book.requeue(b);
      return 'failed';
    }
  }
  name ??= ctx.newSessionName();
  const ids = [...b.members.keys()];
  const tags = sharedTags(b.members.values());
  const body: SessionCreate = {
    name,
    configuration_name: b.configName,
    configuration_limit: b.configLimit,
    ansible_limit: ids.join(','),
    target: { definition: 'dynamic' },
    ...(tags ? { tags } : {}),
  };
  logSessions.debug(`Submitting a session to CFS: ${JSON.stringify(body)}`);
  const attrs = sessionSpanAttributes({ name, configuration: b.configName, batchSize: ids.length, limit: b.configLimit });
  try {
    await withSpan(SPAN.sessionCreate, attrs, () => ctx.client.createSession(body, { signal }));
    adopted(ctx, b, name);
    return 'sent';
  } catch (err) {
    if (!isCfsError(err) || err.kind === 'aborted') throw err;
    ctx.metrics.sessionCreateFailures.inc({ reason: createFailureReason(err) });
    logCfsError(logSessions, err);
    // Reported in the heartbeat: the sidecar must read a refused create as CFS trouble, not as a stalled loop.
    noteCfsError(state, err, clock.now());
    if (err.kind === 'http' && err.status === 409) {
      // The name exists already (e.g. our own earlier POST): confirm by lookup on the next attempt.
      state.book.markUncertain(b, name);
      return 'failed';
    }
    if (certainlyNotCreated(err)) {
      state.book.retryLater(b, clock.now());
      return err.kind === 'http' ? 'failed' : 'stop';
    }
    state.book.markUncertain(b, name);
    state.book.retryLater(b, clock.now());
    return 'stop';
  }
}
