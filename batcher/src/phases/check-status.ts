/**
 * Phase `check_status` (CFS sessions, every cycle): follows the active sessions; a finished one gets its completion
 * PATCHes (rules/completion.ts) and its result counts toward the backoff; its batch is released once every PATCH is
 * written. PATCHes start only within a per-cycle budget: one slow endpoint cannot hold collection and sending, and
 * a write that failed (or had no time) is retried next cycle while its batch stays held (members busy, never lost
 * and never re-batched before their completion is written).
 */
import { isCfsError, type CfsSession } from '@cfs-batcher/shared';
import type { CfsApi } from '../cfs-port';
import type { PhaseContext } from '../context';
import type { PendingCompletion } from '../state';
import { logBatch, logSessions } from '../log';
import type { CompletionResult } from '../metrics';
import { recordCompletions } from '../rules/backoff';
import { batchState, type Batch } from '../rules/batch';
import { SESSION_PREFIX, sessionOutcome } from '../rules/session-status';
import { readComponents, reportInvalid } from './common';
import { notePendingList } from './pacing-observe';
import { completionPatches, retryCompletions, writeCompletions } from './completion-writes';
import { observeSessions } from './foreign';

/** Extra minutes on the complete-sessions max_age window (clock skew between us and CFS). */
const COMPLETE_LIST_MARGIN_MIN = 15;

/**
 * Follows active sessions with paged lists instead of one GET per session: pending and running every cycle, and
 * complete (limited by max_age to the time our oldest session has been tracked, plus a margin) only when some
 * tracked session is in neither. A session still unseen has finished long ago or was deleted: one GET tells
 * which (404 = deleted). That GET is also the guard against a list that does not show a session yet: nothing is
 * released on absence alone.
 */
/** One run of the phase: what every step needs (the phase's CFS port and clock, the PATCH deadline, results). */
interface CheckRun {
  readonly ctx: PhaseContext;
  /** No completion PATCH starts after it. */
  readonly deadline: number;
  /** Success of each session that finished this cycle, for the backoff. */
  readonly results: boolean[];
  readonly signal?: AbortSignal;
}

/** What the session lists showed: sessions by name, and names whose record could not be read. */
interface Listed {
  readonly sessions: ReadonlyMap<string, CfsSession>;
  readonly unreadable: ReadonlySet<string>;
}

export async function checkStatus(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  logBatch.debug('Checking batch session status');
  const run: CheckRun = { ctx, deadline: ctx.clock.now() + ctx.tuning.patchBudgetMs, results: [], signal };
  try {
    await retryCompletions(ctx, run.deadline, signal);
    await followAll(run);
  } finally {
    // Completions already seen count toward backoff even if a later step failed the cycle.
    recordResults(ctx, run.results);
  }
}

async function followAll(run: CheckRun): Promise<void> {
  const { ctx, signal } = run;
  const { completions } = ctx.state;
  const active = ctx.state.book.all().filter((b) => batchState(b) === 'active' && !completions.has(b.id));
  const sessions = new Map<string, CfsSession>();
  const unreadable = new Set<string>();
  const list = async (filter: Parameters<CfsApi['listSessions']>[0]): Promise<void> => {
    for await (const page of ctx.client.listSessions(filter, { signal })) {
      for (const s of page.sessions) sessions.set(s.name, s);
      for (const r of page.invalid) if (r.id) unreadable.add(r.id);
      reportInvalid(ctx, logSessions, 'session', page.invalid);
    }
  };
  await list({ name_contains: SESSION_PREFIX, status: 'pending' });
  // What the operator has not started yet (pacing): every batcher session, ours or a predecessor's.
  notePendingList(ctx, new Set([...sessions.keys(), ...unreadable]));
  await list({ name_contains: SESSION_PREFIX, status: 'running' });
  // Listed every cycle, with or without sessions of our own: another batcher's sessions show here (foreign.ts).
  observeSessions(ctx, sessions.values());
  if (active.length === 0) return;
  const unseen = active.filter((b) => !sessions.has(b.sessionName!) && !unreadable.has(b.sessionName!));
  if (unseen.length > 0) {
    const now = ctx.clock.now();
    const oldest = Math.min(...unseen.map((b) => b.sessionStart ?? now));
    const minutes = Math.ceil(Math.max(0, now - oldest) / 60_000) + COMPLETE_LIST_MARGIN_MIN;
    await list({ name_contains: SESSION_PREFIX, status: 'complete', max_age: `${minutes}m` });
  }
  await followSessions(run, active, { sessions, unreadable });
}

/** A session that ended this cycle: counted once, whether its batch is released now or after its PATCHes. */
function countFinished(run: CheckRun, success: boolean, result: CompletionResult): void {
  run.results.push(success);
  run.ctx.state.cycleCompleted += 1;
  run.ctx.metrics.sessionsCompleted.inc({ result });
}

async function followSessions(run: CheckRun, active: readonly Batch[], listed: Listed): Promise<void> {
  const { ctx, signal } = run;
  const { book } = ctx.state;
  const finished: { b: Batch; outcome: 'complete' | 'failed' }[] = [];
  const gone = (b: Batch, result: CompletionResult): void => {
    book.release(b);
    countFinished(run, false, result);
  };
  for (const b of active) {
    const name = b.sessionName!;
    if (listed.unreadable.has(name)) continue; // unreadable record: status unknown, look again next cycle
    let session = listed.sessions.get(name);
    if (!session) {
      try {
        session = await ctx.client.getSession(name, { signal });
      } catch (err) {
        if (isCfsError(err) && err.isNotFound) {
          logBatch.info(`Session ${name} no longer exists`);
          gone(b, 'deleted');
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
    book.noteStatus(b, st?.status ?? null, ctx.clock.now());
    logSessions.debug(`Session status for ${name} is status:${st?.status ?? ''} completed:${st?.succeeded ?? ''}`);
    const outcome = sessionOutcome(session);
    if (outcome === 'complete' || outcome === 'failed') {
      finished.push({ b, outcome });
    } else if (
      outcome === 'pending' &&
      ctx.clock.now() - (b.sessionStart ?? 0) > ctx.state.options.batcher_pending_timeout * 1000
    ) {
      logBatch.warn(`Session ${name} is stuck in pending and will be deleted.`);
      ctx.state.pacing.awaiting.delete(name); // not a start: the allowance is already at its floor
      try {
        await ctx.client.deleteSession(name, { signal });
      } catch (err) {
        if (!(isCfsError(err) && err.isNotFound)) throw err;
      }
      gone(b, 'pending_timeout');
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
    countFinished(run, success, result);
    const c: PendingCompletion = { batch: f.b, success, result, patches: completionPatches(f.b, f.outcome, current) };
    ctx.state.completions.set(f.b.id, c);
    pending.push(c);
  }
  await writeCompletions(ctx, pending, run.deadline, signal);
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
