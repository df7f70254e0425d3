/** What several phases share: reporting skipped records, reading component records by id. */
import type { InvalidRecord, Logger } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logComponents } from '../log';
import { toBatchComponent, type BatchComponent } from '../rules/component';

export function reportInvalid(
  ctx: PhaseContext,
  log: Logger,
  kind: 'component' | 'session',
  invalid: readonly InvalidRecord[],
): void {
  for (const r of invalid) {
    ctx.metrics.invalidRecords.inc({ kind });
    log.warn(`Skipping invalid ${kind} record ${r.id ?? `#${r.index}`}: ${r.problem}`);
  }
}

/**
 * One ids= read (chunked by the client), page by page, keeping only the compact form: at 50k members the raw
 * records would cost ~20x more than the snapshots.
 */
export async function readComponents(
  ctx: PhaseContext,
  ids: string[],
  unusable: (id: string, reason: string) => string,
  signal?: AbortSignal,
): Promise<Map<string, BatchComponent>> {
  const out = new Map<string, BatchComponent>();
  for await (const page of ctx.client.listComponents({ ids, config_details: true, state_details: true }, { signal })) {
    reportInvalid(ctx, logComponents, 'component', page.invalid);
    for (const raw of page.components) {
      const r = toBatchComponent(raw, false, ctx.state.pool);
      if (r.ok) out.set(r.component.id, r.component);
      else logComponents.warn(unusable(r.id, r.reason));
    }
  }
  return out;
}
