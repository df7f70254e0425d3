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
import type { CreateIntent } from '../rules/create-intents';
import { adopted, intentOf, postSession, sessionBody } from './creates';
import { resolveUncertain } from './uncertain';

/**
 * Odd answers (lost, 404, 5xx) a phase takes before it stops, once they outnumber the good ones: an odd answer among
 * many good ones does not stall every other batch for a cycle, and a CFS failing every POST gets 3 per cycle.
 */
const MAX_UNCERTAIN_PER_PHASE = 3;

export async function send(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state, clock } = ctx;
  logBatch.debug('Sending completed batches');
  const now = clock.now();
  const mayCreate = !isBackingOff(state.backoff, now) && now >= ctx.intents.holdUntil;
  const resolved = await resolveUncertain(ctx, mayCreate, signal);
  const ready = resolved === 'ok' && mayCreate ? state.book.all().filter((b) => isReadyToSend(b, state.options.batch_size, state.options.batch_window, now)) : [];
  const planned = ready.slice(0, ctx.tuning.sendMaxPerPhase).map((b) => {
    // A batch keeps its name from attempt to attempt, so an unchanged plan does not rewrite the intents file.
    if (b.plannedName === null) {
      b.plannedName = ctx.newSessionName();
      b.plannedAt = now;
    }
    return { b, body: sessionBody(b.plannedName, b, [...b.members.keys()], b.members.values()) };
  });
  // Before any POST: a crash after this line leaves names a restarted instance will hold until they resolve.
  if (!(await recordIntents(ctx, planned.map((p) => intentOf(p.b, p.body.name, p.b.plannedAt, p.body))))) return;
  let sent = 0;
  let uncertain = 0;
  for (const { b, body } of planned) {
    const r = await createBatch(ctx, b, body, signal);
    if (r === 'sent') sent += 1;
    if (r === 'uncertain') uncertain += 1;
    if (r === 'stop' || (uncertain >= MAX_UNCERTAIN_PER_PHASE && uncertain > sent)) break;
  }
  if (sent > 0) logBatch.info(`Successfully submitted ${sent} batches for configuration`);
}

/** 'sent' | 'failed' (this batch only) | 'uncertain' (an odd answer) | 'stop' (no answer: send nothing more this cycle). */
async function createBatch(ctx: PhaseContext, b: Batch, body: SessionCreate, signal?: AbortSignal): Promise<'sent' | 'failed' | 'uncertain' | 'stop'> {
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
    if (ctx.intents.lastWriteProblem !== '') logSessions.info(`Create intents are recorded in ${ctx.intents.path} again`);
    ctx.intents.lastWriteProblem = '';
    return true;
  }
  if (ctx.intents.lastWriteProblem !== w.problem) {
    logSessions.error(`Unable to record session create intents in ${ctx.intents.path}: ${w.problem}; creating no session until it can be written`);
  }
  ctx.intents.lastWriteProblem = w.problem;
  return fresh.length === 0;
}
