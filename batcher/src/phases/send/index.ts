/**
 * Phase `send` (CFS sessions, every cycle unless disabled), its one entry point. A batch's walk through it, in the
 * order of this file:
 * 1. the uncertain creates are resolved first (uncertain.ts): looked up by name, adopted, re-POSTed or retired;
 * 2. the ready batches are picked (candidates.ts), chunk by chunk: the pacing room (pacing-wait.ts waits for the
 *    operator while the pending cap holds), the members read again where their records are older than the cycle's
 *    collect or the last wait (refresh.ts), and each batch still ready planned under its name;
 * 3. the names about to be POSTed are recorded in the create-intents file (one write per chunk) before any POST;
 * 4. each is POSTed and its answer applied (post.ts): adopted, retry delay, or uncertain under its name.
 * The batch's changes are the book's verbs (rules/batch-book.ts); this folder only decides which.
 */
import type { PhaseContext } from '../../context';
import { logBatch } from '../../log';
import { isBackingOff } from '../../rules/backoff';
import { batchState } from '../../rules/batch';
import type { CreateIntent } from '../../rules/create-intents';
import type { PacingLimit } from '../../rules/pacing';
import { candidates, stillReady } from './candidates';
import { roomToCreate } from './pacing-wait';
import { createPlanned, intentOf, plan, type Tally } from './post';
import { refreshStale } from './refresh';
import { resolveUncertain } from './uncertain';

/** Names one intents write records at most: what a crash can leave for a restarted instance to resolve. */
const CREATES_PER_INTENTS_WRITE = 100;

/**
 * The outer loop: resolve uncertain names, then create chunk after chunk until none is ready, the phase's count
 * (`BATCHER_SEND_MAX_PER_PHASE`) or time slice is used (the rest go next cycle, so no phase is unbounded by design),
 * or pacing ends the phase (rules/pacing.ts). While CFS is in trouble, batches held by their retry delay are tried
 * too (candidates.ts): the batcher keeps trying at least once per check interval (the sidecar reads that as CFS
 * trouble, not a stalled loop) and resumes within one interval when CFS recovers.
 */
export async function send(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state, clock } = ctx;
  const wasPaced = state.pacing.limited;
  state.pacing.limited = null;
  logBatch.debug('Sending completed batches');
  const now = clock.now();
  const mayCreate = !isBackingOff(state.backoff, now) && now >= state.intents.heldUntil;
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

/**
 * One write per chunk: every uncertain name plus `fresh` (about to be POSTed); the store skips it when the file
 * already says exactly that. False (creates skipped this cycle) when it cannot be written: a create that is not
 * recorded could be duplicated after a crash, and the heartbeat on the same volume tells the sidecar that something
 * is wrong.
 */
async function recordIntents(ctx: PhaseContext, fresh: CreateIntent[]): Promise<boolean> {
  const intents = ctx.state.book
    .all()
    .filter((b) => batchState(b) === 'uncertain')
    .map((b) => intentOf(b, b.uncertainName!, b.plannedAt))
    .concat(fresh);
  return (await ctx.state.intents.record(intents, Date.now())) || fresh.length === 0;
}
