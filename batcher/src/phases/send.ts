/**
 * Phase `send` (CFS sessions, every cycle unless disabled): first resolves the uncertain creates (uncertain.ts),
 * then records the names about to be POSTed in the create-intents file (one write) and creates a session for each
 * ready batch. The batch's transitions (uncertain, retry delay, active) are the book's (rules/batch-book.ts).
 */
import type { SessionCreate } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logBatch, logSessions } from '../log';
import { isBackingOff } from '../rules/backoff';
import { batchState, isReadyToSend, type Batch } from '../rules/batch';
import { pacingGate } from '../rules/pacing';
import type { CreateIntent } from '../rules/create-intents';
import { adopted, intentOf, postSession, retryTurn, sessionBody } from './creates';
import { resolveUncertain } from './uncertain';

/**
 * Odd answers (lost, 404, 5xx) a phase takes before it stops, once they outnumber the good ones: an odd answer among
 * many good ones does not stall every other batch for a cycle, and a CFS failing every POST gets 3 per cycle.
 */
const MAX_UNCERTAIN_PER_PHASE = 3;

/**
 * The outer loop: resolve uncertain names, record the plan, then create until the send time slice is used (the rest
 * go next cycle, so no phase is unbounded by design) or pacing holds creation (rules/pacing.ts). While CFS is in
 * trouble, batches held by their retry delay are tried too (see candidates): the batcher keeps trying at least once
 * per check interval (the sidecar reads that as CFS trouble, not a stalled loop) and resumes within one interval
 * when CFS recovers.
 */
export async function send(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state, clock } = ctx;
  const wasPaced = state.pacing.limited;
  state.pacing.limited = null;
  logBatch.debug('Sending completed batches');
  const now = clock.now();
  const mayCreate = !isBackingOff(state.backoff, now) && now >= ctx.intents.holdUntil;
  const resolved = await resolveUncertain(ctx, mayCreate, signal);
  const ready = resolved === 'ok' && mayCreate ? candidates(ctx) : [];
  const planned = ready.slice(0, ctx.tuning.sendMaxPerPhase).map(({ b, probe }) => {
    // A batch keeps its name from attempt to attempt, so an unchanged plan does not rewrite the intents file.
    if (b.plannedName === null) {
      b.plannedName = ctx.newSessionName();
      b.plannedAt = now;
    }
    return { b, probe, body: sessionBody(b.plannedName, b, [...b.members.keys()], b.members.values()) };
  });
  // Before any POST: a crash after this line leaves names a restarted instance will hold until they resolve.
  if (
    !(await recordIntents(
      ctx,
      planned.map((p) => intentOf(p.b, p.body.name, p.b.plannedAt, p.body)),
    ))
  )
    return;
  const sliceEnd = clock.now() + ctx.tuning.sendSliceMs;
  let sent = 0;
  let uncertain = 0;
  for (const { b, probe, body } of planned) {
    const t = clock.now();
    if (t >= sliceEnd) {
      logBatch.info(`Send time slice of ${ctx.tuning.sendSliceMs} ms used; the remaining batches are sent next cycle`);
      break;
    }
    const limit = pacingGate(state.pacing, state.pacingCaps, t);
    if (limit !== null) {
      state.pacing.limited = limit;
      if (wasPaced?.why !== limit.why) logBatch.info(`Pacing session creation: ${limit.reason}`);
      break;
    }
    const troubleBefore = state.creating.trouble.create;
    const r = await createBatch(ctx, b, body, signal);
    if (r === 'sent') sent += 1;
    if (r === 'uncertain') uncertain += 1;
    // A probe that met CFS trouble again ends the phase: one extra try per cycle, not a flood.
    const failedAgain = state.creating.trouble.create !== null && state.creating.trouble.create !== troubleBefore;
    if (r === 'stop' || (probe && failedAgain) || (uncertain >= MAX_UNCERTAIN_PER_PHASE && uncertain > sent)) break;
  }
  if (sent > 0) logBatch.info(`Successfully submitted ${sent} batches for configuration`);
}

/**
 * Ready batches in book order, then batches held by a retry delay that may go early (creates.ts retryTurn): as
 * probes while creates are failing, and all of them once a create has succeeded again. Uncertain batches are not
 * here: resolveUncertain looks them up every cycle, and their name is the idempotency key, so a repeated POST can
 * never make a second session.
 */
function candidates(ctx: PhaseContext): { b: Batch; probe: boolean }[] {
  const { state, clock } = ctx;
  const { batch_size: size, batch_window: window } = state.options;
  const now = clock.now();
  const ready = state.book.all().filter((b) => isReadyToSend(b, size, window, now));
  const held = state.book
    .all()
    .filter((b) => b.nextAttemptAt > now && isReadyToSend(b, size, window, b.nextAttemptAt))
    .map((b) => ({ b, turn: retryTurn(ctx, b, now) }))
    .filter((x) => x.turn !== null)
    .sort((x, y) => x.b.nextAttemptAt - y.b.nextAttemptAt);
  return [...ready.map((b) => ({ b, probe: false })), ...held.map(({ b, turn }) => ({ b, probe: turn === 'probe' }))];
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
 * One write per phase: every uncertain name plus `fresh` (about to be POSTed); skipped when the file already says
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
