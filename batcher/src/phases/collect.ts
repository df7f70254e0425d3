/** Phase `collect` (CFS components, every cycle unless disabled): files every enabled pending component in the book. */
import type { InvalidRecord } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logBatch, logComponents } from '../log';
import { toBatchComponent } from '../rules/component';
import { pendingRecords } from './collect-source';

/** Pages every enabled pending component into batches; queued members no longer pending are dropped. */
export async function collect(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state } = ctx;
  logBatch.debug('Checking components for new configuration states');
  const seen = new Set<string>();
  const rejected = new Map<string, string>();
  const now = ctx.clock.now();
  state.collectStartedAt = now;
  state.pool.rotate();
  state.book.beginCollect();
  // Components held by a created session, and at steady state queued ones unchanged, are already in `seen` and
  // never reach the loop below (collect-source.ts).
  for await (const page of pendingRecords(ctx, seen, signal)) {
    for (const r of page.invalid) reject(ctx, rejected, schemaRejection(r));
    for (const raw of page.components) {
      if (raw.enabled === false) continue;
      const r = toBatchComponent(raw, true, state.pool, now);
      if (!r.ok) {
        reject(ctx, rejected, { key: r.id, line: `Skipping component ${r.id}: ${r.reason}`, reason: r.reason });
        continue;
      }
      seen.add(r.component.id);
      state.book.add(r.component, state.options.batch_size, now);
    }
  }
  state.rejectedComponents = rejected;
  const dropped = state.book.prune(seen);
  if (dropped.length > 0) logBatch.debug(`Dropped ${dropped.length} queued components that are no longer pending`);
  // Schedulable pending components only: a record the batcher must skip stays pending in CFS, and the sidecar's
  // progress rule must not restart the batcher for data a restart cannot fix.
  state.pendingSeen = seen.size;
  logBatch.debug(`Found ${seen.size} components that need updates`);
}

interface Rejection {
  key: string;
  line: string;
  reason: string;
}

/** A record the client's schema refused (keyed apart from rule rejections of the same id). */
function schemaRejection(r: InvalidRecord): Rejection {
  const label = r.id ? r.id : `#${r.index}`;
  return {
    key: `schema:${label}`,
    line: `Skipping invalid component record ${label}: ${r.problem}`,
    reason: r.problem,
  };
}

/**
 * Logged at WARNING and counted when first seen or when its reason changes; at DEBUG while it stays the same (a
 * record that never leaves pending would otherwise flood the log every cycle). Never sent either way.
 */
function reject(ctx: PhaseContext, rejected: Map<string, string>, r: Rejection): void {
  rejected.set(r.key, r.reason);
  if (ctx.state.rejectedComponents.get(r.key) === r.reason) {
    logComponents.debug(r.line);
    return;
  }
  ctx.metrics.invalidRecords.inc({ kind: 'component' });
  logComponents.warn(r.line);
}
