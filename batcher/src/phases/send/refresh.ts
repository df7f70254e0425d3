/**
 * Before a chunk is POSTed, its members' records must be this cycle's: collect reads queued members again only when
 * their lean record shows a change (phases/collect-source.ts), and a send phase that waited for the operator has older
 * ones still. So the members whose record was read before `since` are read again by id (one `ids=` read, chunked by
 * the client) and filed anew in the book: unchanged -> refreshed; configuration, pending layers, latest status or
 * desired state changed -> moved to the batch of their new key (never POSTed with the old configuration); no longer
 * pending or enabled, or now unusable -> out of the batch (collect files or reports them again next cycle). What is
 * left of the chunk is the batches still ready to POST.
 */
import type { PhaseContext } from '../../context';
import { logBatch } from '../../log';
import { batchState, isReadyToSend, type Batch } from '../../rules/batch';
import { toBatchComponent, type BatchComponent } from '../../rules/component';
import { FULL_LISTING } from '../collect-source';
import type { Candidate } from './candidates';

/** Reads the chunk's stale members again (see above); the candidates still ready after that, in chunk order. */
export async function refreshChunk(
  ctx: PhaseContext,
  chunk: readonly Candidate[],
  since: number,
  signal?: AbortSignal,
): Promise<Candidate[]> {
  await refreshStale(
    ctx,
    chunk.map((c) => c.b),
    since,
    signal,
  );
  return chunk.filter((c) => stillReady(ctx, c));
}

/** Still queued, with members, and ready after its members were read again (one may have left, or changed key). */
function stillReady(ctx: PhaseContext, c: Candidate): boolean {
  const { book, options } = ctx.state;
  return (
    book.has(c.b) && batchState(c.b) === 'queued' && isReadyToSend(c.b, options.batch_size, options.batch_window, c.at)
  );
}

/** Members of `batches` whose record predates `since` (or is unknown). */
function staleMembers(batches: readonly Batch[], since: number): string[] {
  const out: string[] = [];
  for (const b of batches) for (const [id, snap] of b.members) if (snap === null || snap.readAt < since) out.push(id);
  return out;
}

/** Reads again the stale members of `batches` and files them anew; returns how many were read. */
async function refreshStale(
  ctx: PhaseContext,
  batches: readonly Batch[],
  since: number,
  signal?: AbortSignal,
): Promise<number> {
  const stale = staleMembers(batches, since);
  if (stale.length === 0) return 0;
  const { state } = ctx;
  const now = ctx.clock.now();
  const fresh = new Map<string, BatchComponent>();
  for await (const page of ctx.client.listComponents({ ...FULL_LISTING, ids: stale }, { signal })) {
    for (const raw of page.components) {
      if (raw.enabled === false) continue;
      const r = toBatchComponent(raw, true, state.pool, now);
      if (r.ok) fresh.set(r.component.id, r.component);
    }
  }
  let moved = 0;
  let dropped = 0;
  for (const id of stale) {
    const c = fresh.get(id);
    if (c === undefined) {
      if (state.book.dropQueued(id)) dropped += 1;
    } else if (state.book.add(c, state.options.batch_size, now) === 'moved') {
      moved += 1;
    }
  }
  if (moved + dropped > 0) {
    logBatch.debug(
      `Read ${stale.length} queued components again before sending: ${moved} changed batch, ${dropped} no longer pending`,
    );
  }
  return stale.length;
}
