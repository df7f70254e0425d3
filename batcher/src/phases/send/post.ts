/**
 * Creating a chunk of ready batches, in the order it happens: each planned under its name (the book keeps it from
 * attempt to attempt), the names recorded in the create-intents file (one write, before any POST), then one POST per
 * batch and what its answer means: created -> adopted; refused -> retry later; anything else -> the name stays the
 * batch's, uncertain, its members busy (rules/create-intents.ts says why). The re-POSTs of uncertain names
 * (uncertain.ts) use the same POST and adoption.
 */
import { isCfsError, withSpan, type SessionCreate } from '@cfs-batcher/shared';
import type { PhaseContext } from '../../context';
import { logBatch, logCfsError, logSessions } from '../../log';
import { createFailureReason } from '../../rules/cfs-errors';
import type { BatchComponent } from '../../rules/component';
import { batchState, sharedTags, type Batch } from '../../rules/batch';
import { createOutcome, type CreateIntent, type CreateOutcome } from '../../rules/create-intents';
import { noteCreate, pacingGate } from '../../rules/pacing';
import { SPAN, sessionSpanAttributes } from '../../spans';
import { msStamp, noteCfsError } from '../../state';
import type { Candidate } from './candidates';

/**
 * Odd answers (lost, 404, 5xx) a phase takes before it stops, once they outnumber the good ones: an odd answer among
 * many good ones does not stall every other batch for a cycle, and a CFS failing every POST gets 3 per cycle.
 */
const MAX_UNCERTAIN_PER_PHASE = 3;

export interface Tally {
  sent: number;
  uncertain: number;
}

interface Planned {
  b: Batch;
  probe: boolean;
  body: SessionCreate;
}

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

/**
 * Creates a chunk of ready batches. 'unrecorded' when the intents file could not be written (nothing was POSTed);
 * 'stop' when the phase must end (slice used, pacing, no answer, a probe failed again).
 */
export async function createChunk(
  ctx: PhaseContext,
  ready: readonly Candidate[],
  sliceEnd: number,
  tally: Tally,
  signal?: AbortSignal,
): Promise<'go on' | 'stop' | 'unrecorded'> {
  const planned = ready.map((c) => plan(ctx, c));
  // Before any POST: a crash after this write leaves names a restarted instance will hold until they resolve.
  const fresh = planned.map((p) => intentOf(p.b, p.body.name, p.b.plannedAt, p.body));
  if (!(await recordIntents(ctx, fresh))) return 'unrecorded';
  return createPlanned(ctx, planned, sliceEnd, tally, signal);
}

/** The batch under its name (the book keeps it from attempt to attempt, so an unchanged plan is not rewritten). */
function plan(ctx: PhaseContext, c: Candidate): Planned {
  const { b } = c;
  const name = ctx.state.book.plan(b, ctx.newSessionName, ctx.clock.now());
  return { b, probe: c.probe, body: sessionBody(name, b, [...b.members.keys()], b.members.values()) };
}

/** The intent recorded for `name`: every member the batch holds (all of them could be in the session). */
function intentOf(b: Batch, name: string, at: number, body?: SessionCreate): CreateIntent {
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

/**
 * One write per chunk: every uncertain name plus `fresh` (about to be POSTed); the store skips it when the file
 * already says exactly that. False (creates skipped this cycle) when it cannot be written: a create that is not
 * recorded could be duplicated after a crash, and the heartbeat on the same volume tells the sidecar that something
 * is wrong.
 */
export async function recordIntents(ctx: PhaseContext, fresh: CreateIntent[]): Promise<boolean> {
  const intents = ctx.state.book
    .all()
    .filter((b) => batchState(b) === 'uncertain')
    .map((b) => intentOf(b, b.uncertainName!, b.plannedAt))
    .concat(fresh);
  return (await ctx.state.intents.record(intents, Date.now())) || fresh.length === 0;
}

/** POSTs a recorded chunk; 'stop' when the phase must end. */
async function createPlanned(
  ctx: PhaseContext,
  planned: readonly Planned[],
  sliceEnd: number,
  tally: Tally,
  signal?: AbortSignal,
): Promise<'go on' | 'stop'> {
  const { state, clock } = ctx;
  for (const { b, probe, body } of planned) {
    const t = clock.now();
    if (t >= sliceEnd) {
      logBatch.info(`Send time slice of ${ctx.tuning.sendSliceMs} ms used; the remaining batches are sent next cycle`);
      return 'stop';
    }
    // The room was counted for this chunk; a cap lowered by a create of our own since is still honoured.
    if (pacingGate(state.pacing, state.pacingCaps, t) !== null) return 'go on';
    const troubleBefore = state.creating.trouble.create;
    const r = await createBatch(ctx, b, body, signal);
    if (r === 'sent') tally.sent += 1;
    if (r === 'uncertain') tally.uncertain += 1;
    // A probe that met CFS trouble again ends the phase: one extra try per cycle, not a flood.
    const failedAgain = state.creating.trouble.create !== null && state.creating.trouble.create !== troubleBefore;
    if (r === 'stop' || (probe && failedAgain)) return 'stop';
    if (tally.uncertain >= MAX_UNCERTAIN_PER_PHASE && tally.uncertain > tally.sent) return 'stop';
  }
  return 'go on';
}

/** 'sent' | 'failed' (this batch only) | 'uncertain' (an odd answer) | 'stop' (no answer: send nothing more this cycle). */
async function createBatch(
  ctx: PhaseContext,
  b: Batch,
  body: SessionCreate,
  signal?: AbortSignal,
): Promise<'sent' | 'failed' | 'uncertain' | 'stop'> {
  const { book } = ctx.state;
  const outcome = await postSession(ctx, b, body, signal);
  const now = ctx.clock.now();
  switch (outcome) {
    case 'created':
      adopted(ctx, b, body.name);
      return 'sent';
    case 'not_created':
      book.retryLater(b, now);
      return 'failed';
    case 'exists':
      book.markUncertain(b, body.name, now + ctx.tuning.createCommitHorizonMs, true);
      return 'failed';
    case 'uncertain':
    case 'silent':
      book.markUncertain(b, body.name, now + ctx.tuning.createCommitHorizonMs);
      return outcome === 'silent' ? 'stop' : 'uncertain';
  }
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
  noteCreate(state.pacing, now, name); // pending in CFS until check_status sees otherwise; counts toward the rate cap
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
