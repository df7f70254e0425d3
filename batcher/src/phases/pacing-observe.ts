/**
 * What a read of the batcher sessions pending in CFS tells pacing: the pending count, which of our sessions the
 * operator has started since the last read (and how long each waited), and how long the oldest one still pending has
 * waited. The allowance follows from that (rules/allowance.ts decides; this module only gathers and logs). Both reads
 * of the pending list feed it: check_status's every cycle, and the send phase's while it waits for the operator.
 */
import type { PhaseContext } from '../context';
import { logBatch } from '../log';
import { observePending } from '../rules/allowance';
import { allowanceReason, pendingAllowed } from '../rules/pacing';

/** `pending`: names of the batcher sessions the list showed pending (unreadable records included). */
export function notePendingList(ctx: PhaseContext, pending: ReadonlySet<string>): void {
  const { pacing, pacingCaps, options } = ctx.state;
  const now = ctx.clock.now();
  const startedAfterMs: number[] = [];
  let oldest: number | null = null;
  for (const [name, at] of pacing.awaiting) {
    if (pending.has(name)) {
      if (oldest === null || at < oldest) oldest = at;
    } else {
      startedAfterMs.push(now - at);
      pacing.awaiting.delete(name);
    }
  }
  pacing.pendingSessions = pending.size;
  if (pacingCaps.pendingSessionsCap <= 0) return;
  const before = pacing.allowance;
  pacing.allowance = observePending(
    before,
    { now, startedAfterMs, pendingBefore: pending.size + startedAfterMs.length, oldestPendingSince: oldest },
    { ceiling: pacingCaps.pendingSessionsCap, pendingTimeoutS: options.batcher_pending_timeout },
  );
  const after = pacing.allowance;
  // Each shrink is an event; growth is logged once when it begins (the gauge shows the rest).
  if (after.why !== before.why || after.shrunkAt !== before.shrunkAt) {
    const line = `Pending-sessions allowance ${pendingAllowed(pacing, pacingCaps)}, ${allowanceReason(pacing, pacingCaps)}`;
    if (after.why === 'halved' || after.why === 'floor') logBatch.warn(line);
    else logBatch.info(line);
  }
}
