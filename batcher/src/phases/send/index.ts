/**
 * Phase `send` (CFS sessions, every cycle unless disabled), its one entry point. A batch's walk through it: each
 * step is one file, entered once per chunk, in this order:
 * 1. uncertain.ts: the uncertain creates are resolved first (looked up by name, adopted, re-POSTed or retired);
 * 2. candidates.ts: the batches that may be created now (ready, or held by a retry delay that may go early);
 * 3. pacing-wait.ts: the room pacing leaves (waiting for the operator while the pending cap holds);
 * 4. refresh.ts: the chunk's members read again where their records are older than the cycle's collect or the last
 *    wait, and the batches still ready after that;
 * 5. post.ts: each planned under its name, the names recorded in the create-intents file (one write per chunk)
 *    before any POST, then the POSTs and what each answer means (adopted, retry delay, uncertain under its name).
 * A batch's changes are the book's verbs (rules/batch-book.ts); this folder decides which.
 */
import type { PhaseContext } from '../../context';
import { logBatch } from '../../log';
import { isBackingOff } from '../../rules/backoff';
import type { PacingLimit } from '../../rules/pacing';
import { standDown } from '../foreign';
import { candidates } from './candidates';
import { roomToCreate } from './pacing-wait';
import { createChunk, recordIntents, type Tally } from './post';
import { refreshChunk } from './refresh';
import { resolveUncertain } from './uncertain';

/** Names one intents write records at most: what a crash can leave for a restarted instance to resolve. */
const CREATES_PER_INTENTS_WRITE = 100;

/**
 * The outer loop: resolve uncertain names, then create chunk after chunk until none is ready, the phase's count
 * (`sendMaxPerPhase`, config.ts) or time slice is used (the rest go next cycle, so no phase is unbounded by design),
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
  // Another batcher's members leave the queued batches whatever happens; standing down, nothing is created.
  const down = await standDown(ctx, signal);
  const mayCreate = !down && !isBackingOff(state.backoff, now) && now >= state.intents.heldUntil;
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
    const still = await refreshChunk(ctx, chunk, freshSince, signal);
    const r = await createChunk(ctx, still, sliceEnd, tally, signal);
    if (r === 'unrecorded') return;
    recorded = true;
    budget -= still.length;
    if (r === 'stop') break;
  }
  if (!recorded) await recordIntents(ctx, []);
}
