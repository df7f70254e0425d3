/**
 * Part of `rebuild`: the previous instance's create intents (create-intents.ts). A name CFS already lists was
 * adopted (or has ended); any other may still commit, so its members are held under it as an uncertain batch and
 * resolved by send's rules (send/uncertain.ts). An unreadable file makes the store hold every create back for one
 * commit horizon rather than risk a duplicate of a create that cannot be known.
 */
import type { PhaseContext } from '../context';
import { logBatch } from '../log';

export async function restoreIntents(
  ctx: PhaseContext,
  listed: ReadonlySet<string>,
  unreadable: ReadonlySet<string>,
): Promise<void> {
  const { state } = ctx;
  const now = ctx.clock.now();
  const horizon = ctx.tuning.createCommitHorizonMs;
  let restored = 0;
  for (const i of await state.intents.restore(now, horizon)) {
    if (listed.has(i.name) && !unreadable.has(i.name)) continue;
    const { key, configuration_name: config, configuration_limit: limit, members } = i;
    // A name CFS lists but cannot show exists: adopted once its document is read.
    state.book.addUncertain(i.name, key, config, limit, members, now + horizon, now, unreadable.has(i.name));
    restored += 1;
  }
  if (restored > 0)
    logBatch.warn(
      `Found ${restored} session creates of a previous instance with unknown outcome; their components stay busy until CFS shows them or their names are retired`,
    );
}
