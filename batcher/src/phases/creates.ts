/**
 * One session POST and what its answer means for the batch, shared by `send` (new batches) and the resolution of
 * uncertain names (uncertain.ts): created -> adopted; refused -> retry later; anything else -> the name stays the
 * batch's, uncertain, its members busy (rules/create-intents.ts says why).
 */
import { isCfsError, withSpan, type SessionCreate } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logCfsError, logSessions } from '../log';
import { retryDelayMs, sharedTags, type Batch } from '../rules/batch';
import { createFailureReason } from '../rules/cfs-errors';
import type { BatchComponent } from '../rules/component';
import { createOutcome, type CreateIntent, type CreateOutcome } from '../rules/create-intents';
import { noteCreate } from '../rules/pacing';
import { SPAN, sessionSpanAttributes } from '../spans';
import { msStamp, noteCfsError } from '../state';

export function sessionBody(
  name: string,
  b: Batch,
  ids: readonly string[],
  members: Iterable<BatchComponent | null>,
): SessionCreate {
  const tags = sharedTags(members);
  return {
    name,
    configuration_name: b.configName,
    configuration_limit: b.configLimit,
    ansible_limit: ids.join(','),
    target: { definition: 'dynamic' },
    ...(tags ? { tags } : {}),
  };
}

/** The intent recorded for `name`: every member the batch holds (all of them could be in the session). */
export function intentOf(b: Batch, name: string, at: number, body?: SessionCreate): CreateIntent {
  const members = [...b.members.keys()];
  return {
    name,
    at_ms: msStamp(at),
    key: b.key,
    configuration_name: b.configName,
    configuration_limit: b.configLimit,
    members,
    body: body ?? sessionBody(name, b, members, b.members.values()),
  };
}

/** The batch's session exists in CFS: it is tracked with `actual` members (all when not given). */
export function adopted(
  ctx: PhaseContext,
  b: Batch,
  name: string,
  actual?: readonly string[],
  snapshots?: ReadonlyMap<string, BatchComponent>,
): void {
  const { state } = ctx;
  const now = ctx.clock.now();
  state.book.adopt(b, name, now, actual, snapshots);
  noteCreate(state.pacing, now); // pending in CFS until check_status sees otherwise; counts toward the rate cap
  state.sessionsCreatedTotal += 1;
  state.cycleCreated += 1;
  state.lastSessionCreatedMs = msStamp(now);
  ctx.metrics.sessionsCreated.inc();
}

/** A POST's result; `silent`: CFS gave no answer at all (timeout, unreachable), so sending more now is pointless. */
export type PostResult = 'created' | CreateOutcome | 'silent';

/** POSTs `body` (name = the batch's key in CFS); 'created' or what the failure proves. CFS errors are logged here. */
export async function postSession(
  ctx: PhaseContext,
  b: Batch,
  body: SessionCreate,
  signal?: AbortSignal,
): Promise<PostResult> {
  logSessions.debug(`Submitting a session to CFS: ${JSON.stringify(body)}`);
  const ids = (body.ansible_limit ?? '').split(',');
  const attrs = sessionSpanAttributes({
    name: body.name,
    configuration: b.configName,
    batchSize: ids.length,
    limit: b.configLimit,
  });
  try {
    await withSpan(SPAN.sessionCreate, attrs, () => ctx.client.createSession(body, { signal }));
    return 'created';
  } catch (err) {
    if (!isCfsError(err) || err.kind === 'aborted') throw err;
    ctx.metrics.sessionCreateFailures.inc({ reason: createFailureReason(err) });
    logCfsError(logSessions, err);
    // Reported in the heartbeat: the sidecar must read a refused create as CFS trouble, not as a stalled loop.
    noteCfsError(ctx.state, err, ctx.clock.now());
    const outcome = createOutcome(err);
    if (outcome !== 'not_created') {
      logSessions.warn(
        `Session ${body.name} may exist (${err.message}); its ${b.members.size} components stay busy until CFS shows it or the name is retired`,
      );
    }
    // A reset is an answer of sorts (the server closed on us); only a timeout means CFS said nothing at all.
    return outcome === 'uncertain' && err.kind === 'timeout' ? 'silent' : outcome;
  }
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
