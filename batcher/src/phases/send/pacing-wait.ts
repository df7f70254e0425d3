/**
 * The send phase's wait for the operator: while the pending-sessions allowance is used up, the batcher sessions
 * pending in CFS are read again every `pacingPollMs` (each read also feeds the allowance, phases/pacing-observe.ts),
 * and creating goes on as soon as the operator has started some. The wait ends
 * the phase when the operator starts none for `pacingStallMs`, when the next poll would not fit in the send slice,
 * or when the creates-per-minute guard holds (rules/pacing.ts decides; this module does the reads and the sleeps).
 */
import type { PhaseContext } from '../../context';
import { createRoom, pacingGate, waitForOperator, type PacingLimit } from '../../rules/pacing';
import { SESSION_PREFIX } from '../../rules/session-status';
import { notePendingList } from '../pacing-observe';

export interface Room {
  /** Creates that may go now; 0 ends the phase (`limit` says why). */
  creates: number;
  limit: PacingLimit | null;
  /** The phase waited (records read before now may be stale). */
  waited: boolean;
}

/** Batcher sessions (ours or a predecessor's) pending in CFS now, by name: one list, as check_status reads it. */
async function pendingSessionsNow(ctx: PhaseContext, signal?: AbortSignal): Promise<Set<string>> {
  const names = new Set<string>();
  let nameless = 0;
  for await (const page of ctx.client.listSessions({ name_contains: SESSION_PREFIX, status: 'pending' }, { signal })) {
    for (const s of page.sessions) names.add(s.name);
    // An unreadable record still holds a place in pending (a nameless one is counted under a name of its own).
    for (const r of page.invalid) names.add(r.id ?? `(unreadable record ${(nameless += 1)})`);
  }
  return names;
}

/** How many creates may go now, after waiting for the operator while it keeps starting sessions. */
export async function roomToCreate(ctx: PhaseContext, sliceEnd: number, signal?: AbortSignal): Promise<Room> {
  const { state, clock, tuning } = ctx;
  let waited = false;
  let progressAt = clock.now();
  let pollsWithoutProgress = 0;
  // Bounded in count as well as time: an injected clock that does not move cannot make this spin.
  const maxPolls = Math.ceil(tuning.sendSliceMs / Math.max(1, tuning.pacingPollMs)) + 1;
  for (let poll = 0; ; poll++) {
    const now = clock.now();
    const limit = pacingGate(state.pacing, state.pacingCaps, now);
    if (limit === null) return { creates: createRoom(state.pacing, state.pacingCaps, now), limit: null, waited };
    const more = waitForOperator(limit, tuning, {
      now,
      sliceEnd,
      sinceProgressMs: now - progressAt,
      pollsWithoutProgress,
    });
    if (!more || poll >= maxPolls || signal?.aborted) return { creates: 0, limit, waited };
    await ctx.sleep(tuning.pacingPollMs, signal);
    const before = state.pacing.pendingSessions;
    notePendingList(ctx, await pendingSessionsNow(ctx, signal));
    waited = true;
    if (state.pacing.pendingSessions < before) {
      progressAt = clock.now();
      pollsWithoutProgress = 0;
    } else {
      pollsWithoutProgress += 1;
    }
  }
}
