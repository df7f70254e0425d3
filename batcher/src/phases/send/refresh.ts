/**
 * Before a batch is POSTed, its members' records must be this cycle's: collect reads queued members again only when
 * their lean record shows a change (phases/collect-source.ts), and a send phase that waited for the operator has older
 * ones still. So the members whose record was read before `since` are read again by id (one `ids=` read, chunked by
 * the client) and filed anew in the book: unchanged -> refreshed; configuration, pending layers, latest status or
 * desired state changed -> moved to the batch of their new key (never POSTed with the old configuration); no longer
 * pending or enabled, or now unusable -> out of the batch (collect files or reports them again next cycle).
 */
import type { PhaseContext } from '../../context';
import { logBatch } from '../../log';
import type { Batch } from '../../rules/batch';
import { toBatchComponent, type BatchComponent } from '../../rules/component';
import { FULL_LISTING } from '../collect-source';

/** Members of `batches` whose record predates `since` (or is unknown). */
export function staleMembers(batches: readonly Batch[], since: number): string[] {
  const out: string[] = [];
  for (const b of batches) for (const [id, snap] of b.members) if (snap === null || snap.readAt < since) out.push(id);
  return out;
}

/** Reads again the stale members of `batches` and files them anew; returns how many were read. */
export async function refreshStale(
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
