/** Phase `collect` (CFS components, every cycle unless disabled): files every enabled pending component in the book. */
import type { PhaseContext } from '../context';
import { logBatch, logComponents } from '../log';
import { toBatchComponent } from '../rules/component';
import { pendingRecords } from './collect-source';
import { reportInvalid } from './common';

/** Pages every enabled pending component into batches; queued members no longer pending are dropped. */
export async function collect(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state } = ctx;
  logBatch.debug('Checking components for new configuration states');
  const seen = new Set<string>();
  const rejected = new Map<string, string>();
  const now = ctx.clock.now();
  state.pool.rotate();
  // Busy components are already in `seen` and never reach the loop below (collect-source.ts).
  for await (const page of pendingRecords(ctx, seen, signal)) {
    reportInvalid(ctx, logComponents, 'component', page.invalid);
    for (const raw of page.components) {
      if (raw.enabled === false) continue;
      const r = toBatchComponent(raw, true, state.pool);
      if (!r.ok) {
        rejected.set(r.id, r.reason);
        ctx.metrics.invalidRecords.inc({ kind: 'component' });
        // Logged as a warning when first seen (or changed); repeats every cycle would flood the log.
        const line = `Skipping component ${r.id}: ${r.reason}`;
        if (state.rejectedComponents.get(r.id) === r.reason) logComponents.debug(line);
        else logComponents.warn(line);
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
