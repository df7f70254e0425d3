/**
 * Resolving uncertain creates (part of `send`, before any new POST). A batch whose POST outcome is unknown keeps its
 * name and all its members busy. Each cycle, from any source: GET by name 200, or the name in a list -> adopt with
 * the session's actual members (ours not in it are free again); else re-POST under the SAME name with the members
 * this cycle's collect still saw pending (201 -> adopted, and a late commit of the old attempt now gets 409; 409 ->
 * it exists, adopted from its document next cycle). One 404 is never proof of absence. With nothing left to
 * re-POST, the name is watched until its commit horizon, then retired.
 */
import { isCfsError, type CfsSession } from '@cfs-batcher/shared';
import type { PhaseContext } from '../../context';
import { logBatch, logCfsError, logSessions } from '../../log';
import { batchState, type Batch } from '../../rules/batch';
import type { BatchComponent } from '../../rules/component';
import { sessionMembers } from '../../rules/create-intents';
import { noteCfsError } from '../../state';
import { retryTurn } from './candidates';
import { adopted, postSession, sessionBody } from './post';

type Seen = { doc: CfsSession } | 'unreadable' | 'absent' | 'trouble';

/** 'stop' when CFS is in trouble (nothing more is sent this cycle). `mayPost`: re-POSTs allowed (not backing off). */
export async function resolveUncertain(
  ctx: PhaseContext,
  mayPost: boolean,
  signal?: AbortSignal,
): Promise<'ok' | 'stop'> {
  const probes = { left: 1 }; // while creates fail, one early re-POST per phase (candidates.ts retryTurn), not a flood
  for (const b of ctx.state.book.all()) {
    if (batchState(b) !== 'uncertain') continue;
    if ((await resolveOne(ctx, b, mayPost, probes, signal)) === 'stop') return 'stop';
  }
  return 'ok';
}

async function resolveOne(
  ctx: PhaseContext,
  b: Batch,
  mayPost: boolean,
  probes: { left: number },
  signal?: AbortSignal,
): Promise<'ok' | 'stop'> {
  const { book } = ctx.state;
  const name = b.uncertainName!;
  const now = ctx.clock.now();
  const seen = await lookup(ctx, name, signal);
  if (seen === 'trouble') return 'stop';
  if (typeof seen === 'object') {
    const actual = sessionMembers(seen.doc);
    if (actual !== null) {
      logSessions.info(`Session ${name} exists from an earlier attempt; tracking it`);
      const freed = [...b.members.keys()].filter((id) => !actual.includes(id)).length;
      if (freed > 0)
        logBatch.info(`${freed} components of batch ${name} are not in its session; they will be batched again`);
      adopted(ctx, b, name, actual);
      return 'ok';
    }
  }
  if (seen !== 'absent') book.noteExists(b); // it exists, its members are not readable yet
  if (b.knownToExist) {
    if (now < b.horizonAt) return 'ok';
    // It exists and whom it targets cannot be read: track it with every held member (busy until it ends).
    logSessions.warn(
      `Session ${name} exists but its members cannot be read; tracking it with its ${b.members.size} components`,
    );
    adopted(ctx, b, name);
    return 'ok';
  }
  const fresh = new Map<string, BatchComponent>();
  for (const [id, c] of b.refreshed) if (b.members.has(id)) fresh.set(id, c);
  if (fresh.size === 0) {
    if (now >= b.horizonAt) retire(ctx, b, name, 'none of its components is still pending');
    return 'ok';
  }
  if (!mayPost) return 'ok';
  const turn = retryTurn(ctx, b, now);
  if (turn === null || (turn === 'probe' && probes.left <= 0)) return 'ok';
  if (turn === 'probe') probes.left -= 1;
  const ids = [...fresh.keys()];
  const outcome = await postSession(ctx, b, sessionBody(name, b, ids, fresh.values()), signal);
  if (outcome === 'created') {
    logSessions.info(`Session ${name} created on a repeated attempt with ${ids.length} components`);
    adopted(ctx, b, name, ids, fresh);
    return 'ok';
  }
  if (outcome === 'exists') {
    book.noteExists(b); // adopted from its document or a list on the next cycle
    return 'ok';
  }
  if (outcome === 'not_created') {
    // This attempt was refused, but the first one may still land until the horizon.
    if (now >= b.horizonAt) retire(ctx, b, name, 'CFS refused it again after its commit horizon');
    else book.retryLater(b, now);
    return 'ok';
  }
  book.markUncertain(b, name, now + ctx.tuning.createCommitHorizonMs);
  book.retryLater(b, now);
  return outcome === 'silent' ? 'stop' : 'ok';
}

/** The name can no longer commit: its batch is dropped and its members are free (the next collect files them). */
function retire(ctx: PhaseContext, b: Batch, name: string, why: string): void {
  logSessions.info(`Session ${name} was not created (${why}); its ${b.members.size} components are free again`);
  ctx.state.book.release(b);
}

/** GET by name, then (on 404, never taken as proof) a list by name. */
async function lookup(ctx: PhaseContext, name: string, signal?: AbortSignal): Promise<Seen> {
  try {
    return { doc: await ctx.client.getSession(name, { signal }) };
  } catch (err) {
    if (!isCfsError(err) || err.kind === 'aborted') throw err;
    if (err.kind === 'invalid-response') return 'unreadable';
    if (!err.isNotFound) return trouble(ctx, err);
  }
  try {
    const { sessions, invalid } = await ctx.client.listAllSessions({ name_contains: name }, { signal });
    const doc = sessions.find((s) => s.name === name);
    if (doc) return { doc };
    return invalid.some((r) => r.id === name) ? 'unreadable' : 'absent';
  } catch (err) {
    if (!isCfsError(err) || err.kind === 'aborted') throw err;
    return trouble(ctx, err);
  }
}

function trouble(ctx: PhaseContext, err: Parameters<typeof noteCfsError>[1]): 'trouble' {
  logCfsError(logSessions, err);
  noteCfsError(ctx.state, err, ctx.clock.now());
  return 'trouble';
}
