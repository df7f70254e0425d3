/**
 * Option changes that cannot wait for the next cycle: a shorter batcher_check_interval or a batcher_disable change
 * seen while sleeping ends the sleep (a 100000 s interval corrected to 10 takes effect within 10 s, not a day
 * later), and batcher_disable turned on then off resets the create backoff.
 */
import { isCfsError } from '@cfs-batcher/shared';
import type { CfsApi } from './cfs-port';
import { logBatch } from './log';
import { initialBackoff } from './rules/backoff';
import { parseOptions, type BatcherOptions } from './rules/options';
import type { BatcherState } from './state';

/** One GET /v3/options: what changed that should end the sleep, or null. A CFS error waits for the cycle. */
export async function optionsChange(
  client: CfsApi,
  have: BatcherOptions,
  signal?: AbortSignal,
): Promise<string | null> {
  let raw: unknown;
  try {
    raw = await client.getOptions({ signal });
  } catch (err) {
    if (!isCfsError(err)) throw err;
    return null;
  }
  const seen = parseOptions(raw, have).options;
  if (seen.batcher_check_interval < have.batcher_check_interval) {
    return `batcher_check_interval changed from ${have.batcher_check_interval} to ${seen.batcher_check_interval}`;
  }
  if (seen.batcher_disable !== have.batcher_disable)
    return `batcher_disable changed to ${String(seen.batcher_disable)}`;
  return null;
}

/** batcher_disable turned on then off resets the create backoff (before, only a restart did; docs/runbook.md). */
export function noteDisableToggle(state: BatcherState): void {
  if (state.options.batcher_disable) {
    state.disableSeen = true;
    return;
  }
  if (!state.disableSeen) return;
  state.disableSeen = false;
  state.backoff = initialBackoff();
  logBatch.info('batcher_disable was turned off: session creation backoff reset');
}
