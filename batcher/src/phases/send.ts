/**
 * Phase `send` (CFS sessions, every cycle unless disabled): first resolves the uncertain creates (uncertain.ts),
 * then creates a session for each ready batch, chunk by chunk: the pacing room (pacing-wait.ts waits for the
 * operator while the pending cap holds), the members read again where their records are older than the cycle's
 * collect or the last wait (send-refresh.ts), the names about to be POSTed recorded in the create-intents file (one
 * write per chunk), then the POSTs. The batch's transitions (uncertain, retry delay, active) are the book's
 * (rules/batch-book.ts).
 */
import type { SessionCreate } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logBatch, logSessions } from '../log';
import { isBackingOff } from '../rules/backoff';
import { batchState, isReadyToSend, type Batch } from '../rules/batch';
import { pacingGate, type PacingLimit } from '../rules/pacing';
import type { CreateIntent } from '../rules/create-intents';
import { adopted, intentOf, postSession, retryTurn, sessionBody } from './creates';
import { roomToCreate } from './pacing-wait';
import { refreshStale } from './send-refresh';
import { resolveUncertain } from './uncertain';

/**
 * Odd answers (lost, 404, 5xx) a phase takes before it stops, once they outnumber the good ones: an odd answer among
 * many good ones does not stall every other batch for a cycle, and a CFS failing every POST gets 3 per cycle.
 */
const MAX_UNCERTAIN_PER_PHASE = 3;

/** Names one intents write records at most: what a crash can leave for a restarted instance to resolve. */
const CREATES_PER_INTENTS_WRITE = 100;

interface Candidate {
  b: Batch;
  probe: boolean;
  /** The time its readiness is judged at (a held batch: when its retry delay ends). */
  at: number;
}

interface Tally {
  sent: number;
  uncertain: number;
}

/**
 * The outer loop: resolve uncertain names, then create chunk after chunk until none is ready, the phase's count
 * (`BATCHER_SEND_MAX_PER_PHASE`) or time slice is used (the rest go next cycle, so no phase is unbounded by design),
 * or pacing ends the phase (rules/pacing.ts). While CFS is in trouble, batches held by their retry delay are tried
 * too (see candidates): the batcher keeps trying at least once per check interval (the sidecar reads that as CFS
 * trouble, not a stalled loop) and resumes within one interval when CFS recovers.
 */
export async function send(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state, clock } = ctx;
  const wasPaced = state.pacing.limited;
  state.pacing.limited = null;
  logBatch.debug('Sending completed batches');
  const now = clock.now();
  const mayCreate = !isBackingOff(state.backoff, now) && now >= ctx.intents.holdUntil;
  const resolved = await resolveUncertain(ctx, mayCreate, signal);
  const tally: Tally = { sent: 0, uncertain: 0 };
  if (resolved === 'ok' && mayCreate) await createReady(ctx, wasPaced, tally, signal);
  // Uncertain names are recorded even when nothing is created (a resolution may have changed them).
  else await recordIntents(ctx, []);
  if (tally.sent > 0) logBatch.info(`Successfully submitted ${tally.sent} batches for configuration`);
}

async function createReady(ctx: PhaseContext, wasPaced: PacingLimit | null, tally: Tally, signal?: AbortSignal) {
  const { state, clock, tuning } = ctx;
  const sliceEnd = clock.now() + tuning.sendSliceMs;
  // Records read since the cycle's collect began are fresh; after a wait for the operator, only newer ones.
  let freshSince = state.collectStartedAt;
  let budget = tuning.sendMaxPerPhase;
  let recorded = false;
  const tried = new Set<number>();
  while (budget > 0) {
    const ready = candidates(ctx).filter((c) => !tried.has(c.b.id));
    if (ready.length === 0) break;
    if (clock.now() >= sliceEnd) {
      logBatch.info(`Send time slice of ${tuning.sendSliceMs} ms used; the remaining batches are sent next cycle`);
      break;
    }
    const room = await roomToCreate(ctx, sliceEnd, signal);
    if (room.waited) freshSince = clock.now();
    if (room.creates === 0) {
      state.pacing.limited = room.limit;
      if (room.limit !== null && wasPaced?.why !== room.limit.why)
        logBatch.info(`Pacing session creation: ${room.limit.reason}`);
      break;
    }
    const chunk = ready.slice(0, Math.min(room.creates, budget, CREATES_PER_INTENTS_WRITE));
    for (const c of chunk) tried.add(c.b.id);
    await refreshStale(
      ctx,
      chunk.map((c) => c.b),
      freshSince,
      signal,
    );
    const planned = chunk.filter((c) => stillReady(ctx, c)).map((c) => plan(ctx, c));
    // Before any POST: a crash after this write leaves names a restarted instance will hold until they resolve.
    if (
      !(await recordIntents(
        ctx,
        planned.map((p) => intentOf(p.b, p.body.name, p.b.plannedAt, p.body)),
      ))
    )
      return;
    recorded = true;
    budget -= planned.length;
    if ((await createPlanned(ctx, planned, sliceEnd, tally, signal)) === 'stop') break;
  }
  if (!recorded) await recordIntents(ctx, []);
}

/** Still queued, with members, and ready after its members were read again (one may have left, or changed key). */
function stillReady(ctx: PhaseContext, c: Candidate): boolean {
  const { book, options } = ctx.state;
  return (
    book.has(c.b) && batchState(c.b) === 'queued' && isReadyToSend(c.b, options.batch_size, options.batch_window, c.at)
  );
}

function plan(ctx: PhaseContext, c: Candidate): { b: Batch; probe: boolean; body: SessionCreate } {
  const { b } = c;
  // A batch keeps its name from attempt to attempt, so an unchanged plan does not rewrite the intents file.
  if (b.plannedName === null) {
    b.plannedName = ctx.newSessionName();
    b.plannedAt = ctx.clock.now();
  }
  return { b, probe: c.probe, body: sessionBody(b.plannedName, b, [...b.members.keys()], b.members.values()) };
}

/** POSTs a recorded chunk; 'stop' when the phase must end (slice used, pacing, no answer, a probe failed again). */
async function createPlanned(
  ctx: PhaseContext,
  planned: readonly { b: Batch; probe: boolean; body: SessionCreate }[],
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
    const limit = pacingGate(state.pacing, state.pacingCaps, t);
    if (limit !== null) return 'go on';
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

/**
 * Ready batches in book order, then batches held by a retry delay that may go early (creates.ts retryTurn): as
 * probes while creates are failing, and all of them once a create has succeeded again. Uncertain batches are not
 * here: resolveUncertain looks them up every cycle, and their name is the idempotency key, so a repeated POST can
 * never make a second session.
 */
function candidates(ctx: PhaseContext): Candidate[] {
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

/**
 * One write per chunk: every uncertain name plus `fresh` (about to be POSTed); skipped when the file already says
 * exactly that. False (creates skipped this cycle) when it cannot be written: a create that is not recorded could be
 * duplicated after a crash, and the heartbeat on the same volume tells the sidecar that something is wrong.
 */
async function recordIntents(ctx: PhaseContext, fresh: CreateIntent[]): Promise<boolean> {
  const intents = ctx.state.book
    .all()
    .filter((b) => batchState(b) === 'uncertain')
    .map((b) => intentOf(b, b.uncertainName!, b.plannedAt))
    .concat(fresh);
  if (ctx.intents.holds(intents)) return true;
  const w = await ctx.intents.write(intents, Date.now());
  if (w.ok) {
    if (ctx.intents.lastWriteProblem !== '')
      logSessions.info(`Create intents are recorded in ${ctx.intents.path} again`);
    ctx.intents.lastWriteProblem = '';
    return true;
  }
  if (ctx.intents.lastWriteProblem !== w.problem) {
    logSessions.error(
      `Unable to record session create intents in ${ctx.intents.path}: ${w.problem}; creating no session until it can be written`,
    );
  }
  ctx.intents.lastWriteProblem = w.problem;
  return fresh.length === 0;
}
