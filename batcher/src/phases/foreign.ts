/**
 * Another batcher against the same CFS (the I/O around rules/foreign.ts): check_status hands every look at the
 * pending and running `batcher-` sessions here; send asks `standDown` before creating, which looks again while a
 * contest is on (the listing of the cycle's start may be older than another batcher's last create), takes the
 * members of foreign sessions out of queued batches and says whether this batcher creates nothing this cycle.
 * Nothing here deletes or changes another batcher's sessions.
 */
import type { CfsSession } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logBatch } from '../log';
import {
  foreignSummary,
  observeForeign,
  parseStartTime,
  quietWindowMs,
  yieldGraceMs,
  yieldText,
  type ForeignChange,
} from '../rules/foreign';
import { SESSION_PREFIX } from '../rules/session-status';

/** Rebuild: every incomplete `batcher-` session already there belongs to a previous instance, never foreign. */
export function notePriorSessions(ctx: PhaseContext, sessions: readonly CfsSession[]): void {
  for (const s of sessions) if ((s.status?.session?.status ?? '') !== 'complete') ctx.state.foreign.prior.add(s.name);
}

/** The names this batcher holds in its book: sessions, uncertain creates and planned names. */
function ownNames(ctx: PhaseContext): Set<string> {
  const own = new Set<string>();
  for (const b of ctx.state.book.all())
    for (const n of [b.sessionName, b.uncertainName, b.plannedName]) if (n !== null) own.add(n);
  return own;
}

/** One look at the listed pending and running `batcher-` sessions. */
export function observeSessions(ctx: PhaseContext, listed: Iterable<CfsSession>): void {
  const { state, clock } = ctx;
  const own = ownNames(ctx);
  const change = observeForeign(state.foreign, listed, {
    isOwn: (n) => own.has(n),
    startOf: (s) => parseStartTime(s.status?.session?.start_time),
    now: clock.now(),
    quietMs: quietWindowMs(state.options),
    graceMs: yieldGraceMs(state.options),
  });
  report(ctx, change);
}

function report(ctx: PhaseContext, change: ForeignChange): void {
  const f = ctx.state.foreign;
  ctx.metrics.foreignSessions.set(f.active.size);
  ctx.metrics.standingDown.set(f.standingDown !== null ? 1 : 0);
  const quietS = Math.round(quietWindowMs(ctx.state.options) / 1000);
  if (change === 'stood_down' && f.standingDown !== null) {
    ctx.metrics.standDowns.inc();
    logBatch.warn(
      `Another batcher is creating sessions in this CFS (${foreignSummary(f)}); standing down: ${yieldText(f.standingDown.why)}. Creating no session until none has appeared for ${quietS} s; own sessions are still followed and completed`,
    );
  } else if (change === 'seen') {
    logBatch.warn(
      `Another batcher is creating sessions in this CFS (${foreignSummary(f)}); this batcher is the elder copy and keeps creating, never for a component in its sessions`,
    );
  } else if (change === 'resumed') {
    logBatch.warn(
      `No other batcher's session has appeared for ${quietS} s (or this batcher won); creating sessions again`,
    );
  }
}

/**
 * Before send creates: a fresh look while a contest is on, then the members of foreign sessions leave the queued
 * batches (a later collect files them again once those sessions end). True: create nothing this cycle.
 */
export async function standDown(ctx: PhaseContext, signal?: AbortSignal): Promise<boolean> {
  const f = ctx.state.foreign;
  if (f.lastNewAt !== null && ctx.clock.now() - f.lastNewAt < quietWindowMs(ctx.state.options)) {
    const listed: CfsSession[] = [];
    for (const status of ['pending', 'running'] as const)
      for await (const page of ctx.client.listSessions({ name_contains: SESSION_PREFIX, status }, { signal }))
        listed.push(...page.sessions);
    observeSessions(ctx, listed);
  }
  let dropped = 0;
  for (const id of f.holders.keys()) if (ctx.state.book.dropQueued(id)) dropped += 1;
  if (dropped > 0) logBatch.debug(`${dropped} queued components are in another batcher's active sessions; not batched`);
  return f.standingDown !== null;
}
