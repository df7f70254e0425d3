/**
 * Phase `rebuild` (CFS sessions, once at start): adopts the incomplete `batcher-` sessions of a previous instance,
 * then restores its create intents that CFS does not show yet as uncertain batches (a POST in flight when it died
 * may still commit), so their members stay busy until those names resolve.
 */
import type { PhaseContext } from '../context';
import { logBatch, logSessions } from '../log';
import type { BatchComponent } from '../rules/component';
import { planRebuild } from '../rules/rebuild-plan';
import { SESSION_PREFIX } from '../rules/session-status';
import { readComponents, reportInvalid } from './common';
import { notePriorSessions } from './foreign';
import { restoreIntents } from './restore-intents';

/** Their members become busy, so no component goes into a second session after a restart. */
export async function rebuild(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state } = ctx;
  const { sessions, invalid } = await ctx.client.listAllSessions({ name_contains: SESSION_PREFIX }, { signal });
  reportInvalid(ctx, logSessions, 'session', invalid);
  notePriorSessions(ctx, sessions);
  const plan = planRebuild(sessions);
  for (const s of plan.skipped)
    logBatch.warn(`Ignoring incomplete session ${s.name} while rebuilding state: ${s.reason}`);
  const ids = [...new Set(plan.targets.flatMap((t) => t.memberIds))];
  const snapshots =
    ids.length > 0
      ? await readComponents(
          ctx,
          ids,
          (id, reason) => `Component ${id} has an unusable record (${reason}); tracking it as busy without a snapshot`,
          signal,
        )
      : new Map<string, BatchComponent>();
  const now = ctx.clock.now();
  for (const t of plan.targets) {
    const members = new Map<string, BatchComponent | null>(t.memberIds.map((id) => [id, snapshots.get(id) ?? null]));
    const { alreadyBusy } = state.book.addRebuilt(t.sessionName, t.configName, t.configLimit, members, now);
    for (const id of alreadyBusy)
      logBatch.warn(`Component ${id} is in more than one incomplete session (${t.sessionName})`);
  }
  await restoreIntents(ctx, new Set(sessions.map((s) => s.name)), new Set(invalid.map((r) => r.id ?? '')));
  state.rebuilt = true;
  logBatch.info(`Rebuilt previous state.  Found ${plan.targets.length} incomplete sessions/batches.`);
}
