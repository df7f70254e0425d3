/**
 * The completion writes of `check_status`: the skipped/failed PATCHes for members Ansible did not record
 * (rules/completion.ts), started only within the cycle's budget; a batch is released once all its writes are done,
 * and what failed with CFS trouble (or had no time) stays queued, its batch held, for the next cycle.
 */
import { isCfsError } from '@cfs-batcher/shared';
import type { CfsApi } from '../cfs-port';
import type { PhaseContext } from '../context';
import { logBatch, logCfsError, logComponents } from '../log';
import type { Batch } from '../rules/batch';
import type { BatchComponent } from '../rules/component';
import { decideCompletion } from '../rules/completion';
import { noteCfsError, type PendingCompletion } from '../state';

type PatchItem = { id: string; patch: Parameters<CfsApi['patchComponent']>[1] };

/** Completions left from earlier cycles: written first, oldest first, within this cycle's budget. */
export async function retryCompletions(ctx: PhaseContext, deadline: number, signal?: AbortSignal): Promise<void> {
  const pending = [...ctx.state.completions.values()];
  if (pending.length === 0) return;
  logBatch.debug(`Retrying the completion of ${pending.length} sessions`);
  await writeCompletions(ctx, pending, deadline, signal);
}

/** Writes what it can before the deadline; a batch is released once all its writes are done. */
export async function writeCompletions(
  ctx: PhaseContext,
  pending: PendingCompletion[],
  deadline: number,
  signal?: AbortSignal,
): Promise<void> {
  const items = pending.flatMap((c) => c.patches.map((p) => ({ ...p, owner: c })));
  const left = await patchAll(ctx, items, deadline, signal);
  // Grouped once: a filter per batch would be pending x left (hundreds of batches, tens of thousands of writes).
  const leftOf = new Map<PendingCompletion, PatchItem[]>();
  for (const { owner, id, patch } of left) {
    const list = leftOf.get(owner);
    if (list) list.push({ id, patch });
    else leftOf.set(owner, [{ id, patch }]);
  }
  for (const c of pending) {
    c.patches = leftOf.get(c) ?? [];
    if (c.patches.length > 0) continue;
    ctx.state.completions.delete(c.batch.id);
    ctx.state.book.release(c.batch);
  }
  if (left.length > 0) {
    logBatch.warn(
      `${left.length} component updates after session completion could not be written; retrying next cycle`,
    );
  }
}

/** The skipped/failed writes for members Ansible did not record (see rules/completion.ts). */
export function completionPatches(
  b: Batch,
  result: 'complete' | 'failed',
  records: ReadonlyMap<string, BatchComponent>,
): PatchItem[] {
  const current = [...b.members.keys()]
    .map((id) => records.get(id))
    .filter((c): c is BatchComponent => c !== undefined);
  const decision = decideCompletion(result, b.sessionName!, b.members, current);
  const patches: PatchItem[] = [];
  for (const a of decision.actions) {
    logBatch.debug(`Checking incomplete component ${a.id}`);
    switch (a.kind) {
      case 'changed':
        logBatch.debug(`Desired config changed for component ${a.id}`);
        break;
      case 'skip':
        logBatch.debug(`Updating component ${a.id} for skipped layers (session success)`);
        for (const patch of a.patches) patches.push({ id: a.id, patch });
        break;
      case 'fail':
        logBatch.debug(`Incrementing error count for component ${a.id} due to session failure`);
        patches.push({ id: a.id, patch: a.patch });
        break;
      case 'ansible-failure':
        logBatch.debug(`Component ${a.id} requires additional configuration`);
        break;
      case 'no-snapshot':
        logBatch.debug(`Component ${a.id} has no start snapshot; leaving it pending`);
        break;
    }
  }
  return patches;
}

/**
 * PATCHes a few at a time, none started after the deadline; returns the items still to write: failed with CFS
 * trouble (timeout, unreachable, 5xx, bad answer) or not started. A 404 (component gone) or another 4xx (a retry
 * cannot fix it) is logged and dropped.
 */
async function patchAll<T extends PatchItem>(
  ctx: PhaseContext,
  items: T[],
  deadline: number,
  signal?: AbortSignal,
): Promise<T[]> {
  const n = ctx.tuning.patchConcurrency;
  const left: T[] = [];
  for (let i = 0; i < items.length; i += n) {
    if (ctx.clock.now() >= deadline) {
      left.push(...items.slice(i));
      break;
    }
    await Promise.all(
      items.slice(i, i + n).map(async (item) => {
        try {
          await ctx.client.patchComponent(item.id, item.patch, { signal });
        } catch (err) {
          if (!isCfsError(err) || err.kind === 'aborted') throw err;
          logCfsError(logComponents, err);
          noteCfsError(ctx.state, err, ctx.clock.now());
          const retry = err.kind !== 'http' || (err.status ?? 500) >= 500;
          if (retry) left.push(item);
        }
      }),
    );
  }
  return left;
}
