/**
 * Phase `check_status` (CFS sessions, every cycle): follows the active sessions; a finished one gets its completion
 * PATCHes (rules/completion.ts) and its result counts toward the backoff; its batch is released once every PATCH is
 * written. PATCHes start only within a per-cycle budget: one slow endpoint cannot hold collection and sending, and
 * a write that failed (or had no time) is retried next cycle while its batch stays held (members busy, never lost
 * and never re-batched before their completion is written).
 */
import { isCfsError, type CfsSession } from '@cfs-batcher/shared';
import type { CfsApi, PhaseContext } from '../context';
import { noteCfsError, type PendingCompletion } from '../state';
import { logBatch, logCfsError, logComponents, logSessions } from '../log';
import type { CompletionResult } from '../metrics';
import { recordCompletions } from '../rules/backoff';
import { batchState, type Batch } from '../rules/batch';
import type { BatchComponent } from '../rules/component';
import { decideCompletion } from '../rules/completion';
import { SESSION_PREFIX, sessionOutcome } from '../rules/session-status';
import { readComponents, reportInvalid } from './common';

/** Extra minutes on the complete-sessions max_age window (clock skew between us and CFS). */
const COMPLETE_LIST_MARGIN_MIN = 15;

type PatchItem = { id: string; patch: Parameters<CfsApi['patchComponent']>[1] };

/**
 * Follows active sessions with paged lists instead of one GET per session: pending and running every cycle, and
 * complete (limited by max_age to the time our oldest session has been tracked, plus a margin) only when some
 * tracked session is in neither. A session still unseen has finished long ago or was deleted: one GET tells
 * which (404 = deleted). That GET is also the guard against a list that does not show a session yet: nothing is
 * released on absence alone.
 */
export async function checkStatus(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  logBatch.debug('Checking batch session status');
  const deadline = ctx.clock.now() + ctx.tuning.patchBudgetMs;
  const results: boolean[] = [];
  try {
    await retryCompletions(ctx, deadline, signal);
    await followAll(ctx, deadline, results, signal);
  } finally {
    // Completions already seen count toward backoff even if a later step failed the cycle.
    recordResults(ctx, results);
  }
}

async function followAll(ctx: PhaseContext, deadline: number, results: boolean[], signal?: AbortSignal): Promise<void> {
  const { completions } = ctx.state;
  const active = ctx.state.book.all().filter((b) => batchState(b) === 'active' && !completions.has(b.id));
  if (active.length === 0) {
    ctx.state.pacing.pendingSessions = 0;
    return;
  }
  const listed = new Map<string, CfsSession>();
  const unreadable = new Set<string>();
  const list = async (filter: Parameters<CfsApi['listSessions']>[0]): Promise<void> => {
    for await (const page of ctx.client.listSessions(filter, { signal })) {
      for (const s of page.sessions) listed.set(s.name, s);
      for (const r of page.invalid) if (r.id) unreadable.add(r.id);
      reportInvalid(ctx, logSessions, 'session', page.invalid);
    }
  };
  await list({ name_contains: SESSION_PREFIX, status: 'pending' });
  // What the operator has not started yet (pacing, rules/pacing.ts): every batcher session, ours or a predecessor's.
  ctx.state.pacing.pendingSessions = listed.size;
  await list({ name_contains: SESSION_PREFIX, status: 'running' });
  const unseen = active.filter((b) => !listed.has(b.sessionName!) && !unreadable.has(b.sessionName!));
  if (unseen.length > 0) {
    const now = ctx.clock.now();
    const oldest = Math.min(...unseen.map((b) => b.sessionStart ?? now));
    const minutes = Math.ceil(Math.max(0, now - oldest) / 60_000) + COMPLETE_LIST_MARGIN_MIN;
    await list({ name_contains: SESSION_PREFIX, status: 'complete', max_age: `${minutes}m` });
  }
  await followSessions(ctx, active, listed, unreadable, results, deadline, signal);
}

async function followSessions(
  ctx: PhaseContext,
  active: Batch[],
  listed: ReadonlyMap<string, CfsSession>,
  unreadable: ReadonlySet<string>,
  results: boolean[],
  deadline: number,
  signal?: AbortSignal,
): Promise<void> {
  const finished: { b: Batch; outcome: 'complete' | 'failed' }[] = [];
  const finish = (b: Batch, success: boolean, result: CompletionResult): void => {
    ctx.state.book.release(b);
    results.push(success);
    ctx.state.cycleCompleted += 1;
    ctx.metrics.sessionsCompleted.inc({ result });
  };
  for (const b of active) {
    const name = b.sessionName!;
    if (unreadable.has(name)) continue; // unreadable record: status unknown, look again next cycle
    let session = listed.get(name);
    if (!session) {
      try {
        session = await ctx.client.getSession(name, { signal });
      } catch (err) {
        if (isCfsError(err) && err.isNotFound) {
          logBatch.info(`Session ${name} no longer exists`);
          finish(b, false, 'deleted');
          continue;
        }
        if (
          isCfsError(err) &&
          ((err.kind === 'http' && (err.status ?? 500) < 500) || err.kind === 'invalid-response')
        ) {
          logBatch.warn(`Unexpected exception checking session status: ${err.message}`);
          continue;
        }
        throw err;
      }
    }
    const st = session.status?.session;
    logSessions.debug(`Session status for ${name} is status:${st?.status ?? ''} completed:${st?.succeeded ?? ''}`);
    const outcome = sessionOutcome(session);
    if (outcome === 'complete' || outcome === 'failed') {
      finished.push({ b, outcome });
    } else if (
      outcome === 'pending' &&
      ctx.clock.now() - (b.sessionStart ?? 0) > ctx.state.options.batcher_pending_timeout * 1000
    ) {
      logBatch.warn(`Session ${name} is stuck in pending and will be deleted.`);
      try {
        await ctx.client.deleteSession(name, { signal });
      } catch (err) {
        if (!(isCfsError(err) && err.isNotFound)) throw err;
      }
      finish(b, false, 'pending_timeout');
    }
  }
  if (finished.length === 0) return;
  // One ids= read (chunked by the client) for the members of every finished batch, not one per batch.
  const ids = [...new Set(finished.flatMap((f) => [...f.b.members.keys()]))];
  const current = await readComponents(
    ctx,
    ids,
    (id, reason) => `Component ${id} skipped after its session ended: ${reason}`,
    signal,
  );
  const pending: PendingCompletion[] = [];
  for (const f of finished) {
    const success = f.outcome === 'complete';
    const result = success ? 'succeeded' : 'failed';
    results.push(success);
    ctx.state.cycleCompleted += 1;
    ctx.metrics.sessionsCompleted.inc({ result });
    const c: PendingCompletion = { batch: f.b, success, result, patches: completionPatches(f.b, f.outcome, current) };
    ctx.state.completions.set(f.b.id, c);
    pending.push(c);
  }
  await writeCompletions(ctx, pending, deadline, signal);
}

/** Completions left from earlier cycles: written first, oldest first, within this cycle's budget. */
async function retryCompletions(ctx: PhaseContext, deadline: number, signal?: AbortSignal): Promise<void> {
  const pending = [...ctx.state.completions.values()];
  if (pending.length === 0) return;
  logBatch.debug(`Retrying the completion of ${pending.length} sessions`);
  await writeCompletions(ctx, pending, deadline, signal);
}

/** Writes what it can before the deadline; a batch is released once all its writes are done. */
async function writeCompletions(
  ctx: PhaseContext,
  pending: PendingCompletion[],
  deadline: number,
  signal?: AbortSignal,
): Promise<void> {
  const items = pending.flatMap((c) => c.patches.map((p) => ({ ...p, owner: c })));
  const left = await patchAll(ctx, items, deadline, signal);
  for (const c of pending) {
    c.patches = left.filter((i) => i.owner === c).map(({ id, patch }) => ({ id, patch }));
    if (c.patches.length > 0) continue;
    ctx.state.completions.delete(c.batch.id);
    ctx.state.book.release(c.batch);
  }
  if (left.length > 0) {
    logBatch.warn(
      `${left.length} component updates after session completion could not be written; retrying next cycle`,
    );
  }
}

/** The skipped/failed writes for members Ansible did not record (see rules/completion.ts). */
function completionPatches(
  b: Batch,
  result: 'complete' | 'failed',
  records: ReadonlyMap<string, BatchComponent>,
): PatchItem[] {
  const current = [...b.members.keys()]
    .map((id) => records.get(id))
    .filter((c): c is BatchComponent => c !== undefined);
  const decision = decideCompletion(result, b.sessionName!, b.members, current);
  const patches: PatchItem[] = [];
  for (const a of decision.actions) {
    logBatch.debug(`Checking incomplete component ${a.id}`);
    switch (a.kind) {
      case 'changed':
        logBatch.debug(`Desired config changed for component ${a.id}`);
        break;
      case 'skip':
        logBatch.debug(`Updating component ${a.id} for skipped layers (session success)`);
        for (const patch of a.patches) patches.push({ id: a.id, patch });
        break;
      case 'fail':
        logBatch.debug(`Incrementing error count for component ${a.id} due to session failure`);
        patches.push({ id: a.id, patch: a.patch });
        break;
      case 'ansible-failure':
        logBatch.debug(`Component ${a.id} requires additional configuration`);
        break;
      case 'no-snapshot':
        logBatch.debug(`Component ${a.id} has no start snapshot; leaving it pending`);
        break;
    }
  }
  return patches;
}

/**
 * PATCHes a few at a time, none started after the deadline; returns the items still to write: failed with CFS
 * trouble (timeout, unreachable, 5xx, bad answer) or not started. A 404 (component gone) or another 4xx (a retry
 * cannot fix it) is logged and dropped.
 */
async function patchAll<T extends PatchItem>(
  ctx: PhaseContext,
  items: T[],
  deadline: number,
  signal?: AbortSignal,
): Promise<T[]> {
  const n = ctx.tuning.patchConcurrency;
  const left: T[] = [];
  for (let i = 0; i < items.length; i += n) {
    if (ctx.clock.now() >= deadline) {
      left.push(...items.slice(i));
      break;
    }
    await Promise.all(
      items.slice(i, i + n).map(async (item) => {
        try {
          await ctx.client.patchComponent(item.id, item.patch, { signal });
        } catch (err) {
          if (!isCfsError(err) || err.kind === 'aborted') throw err;
          logCfsError(logComponents, err);
          noteCfsError(ctx.state, err, ctx.clock.now());
          const retry = err.kind !== 'http' || (err.status ?? 500) >= 500;
          if (retry) left.push(item);
        }
      }),
    );
  }
  return left;
}

function recordResults(ctx: PhaseContext, results: readonly boolean[]): void {
  if (results.length === 0) return;
  const { state } = ctx;
  logBatch.info(`${results.length} batches/sessions have completed`);
  const { state: backoff, event } = recordCompletions(
    state.backoff,
    results,
    ctx.clock.now(),
    state.options.batcher_max_backoff,
  );
  state.backoff = backoff;
  if (event?.kind === 'halted') {
    logBatch.warn(
      `The 20 most recent configuration sessions have failed. Halting session creation for ${event.seconds} seconds`,
    );
  } else if (event?.kind === 'resumed') {
    logBatch.info('A session has succeeded.  Resuming normal operations');
  }
}
