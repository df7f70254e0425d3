/**
 * Part of `rebuild`: the previous instance's create intents (create-intents.ts). A name CFS already lists was
 * adopted (or has ended); any other may still commit, so its members are held under it as an uncertain batch and
 * resolved by send's rules. An unreadable file holds every create back for one commit horizon rather than risk a
 * duplicate of a create that cannot be known.
 */
import type { PhaseContext } from '../context';
import { logBatch, logMain } from '../log';

export async function restoreIntents(
  ctx: PhaseContext,
  listed: ReadonlySet<string>,
  unreadable: ReadonlySet<string>,
): Promise<void> {
  const { state, intents } = ctx;
  const now = ctx.clock.now();
  const horizon = ctx.tuning.createCommitHorizonMs;
  const loaded = await intents.load();
  if (!loaded.ok) {
    intents.holdUntil = now + horizon;
    state.intentsHeldUntil = intents.holdUntil;
    // Set aside (kept for inspection): a restart during the hold must not find it again and hold forever.
    const aside = await intents.setAside();
    logMain.error(
      `Create intents file ${intents.path} is unusable: ${loaded.problem}; holding back session creation for ${Math.round(horizon / 1000)} seconds so a create in flight before the restart cannot be duplicated${aside ? `; the file is kept as ${aside}` : ''}`,
    );
    return;
  }
  let restored = 0;
  for (const i of loaded.intents) {
    if (listed.has(i.name) && !unreadable.has(i.name)) continue;
    const b = state.book.addUncertain(
      i.name,
      i.key,
      i.configuration_name,
      i.configuration_limit,
      i.members,
      now + horizon,
      now,
    );
    if (unreadable.has(i.name)) b.knownToExist = true;
    restored += 1;
  }
  if (restored > 0)
    logBatch.warn(
      `Found ${restored} session creates of a previous instance with unknown outcome; their components stay busy until CFS shows them or their names are retired`,
    );
}
