/**
 * What the heartbeat's `creating` and `progress` say: every create, lookup and completion PATCH is recorded as an
 * attempt (by a wrapper around the CFS port, so the phases need not know), every CFS answer as progress, and the
 * state line is derived from them and the book. The sidecar reads a batcher that keeps trying as CFS trouble, and
 * one that stops trying as a stalled loop.
 */
import { isCfsError, type CfsError, type CreatingState } from '@cfs-batcher/shared';
import type { CfsApi } from './context';
import { isBackingOff, backoffUntil } from './rules/backoff';
import type { BookTally } from './rules/batch-book';
import { uncertainCreating } from './rules/create-intents';
import type { BatcherState } from './state';

/** A run of CFS failures on one kind of call: how it failed, how many times in a row, since when. */
export interface Trouble {
  state: 'cfs_refusing' | 'cfs_timeout';
  what: string;
  count: number;
  since: number;
}

export interface CreatingTrack {
  lastAttemptAt: number | null;
  /** Creates and lookups, and completion PATCHes, apart: a create that works says nothing of a hanging PATCH. */
  trouble: { create: Trouble | null; patch: Trouble | null };
  /** When a create last succeeded right after a run of create trouble (monotonic). */
  recoveredAt: number | null;
  lastCfsAnswerAt: number | null;
}

export function initialCreating(): CreatingTrack {
  return { lastAttemptAt: null, trouble: { create: null, patch: null }, recoveredAt: null, lastCfsAnswerAt: null };
}

/** Start of the current run of CFS errors (creates, lookups or PATCHes), or null. */
export function troubleSince(t: CreatingTrack): number | null {
  const since = [t.trouble.create?.since, t.trouble.patch?.since].filter((x): x is number => x !== undefined);
  return since.length > 0 ? Math.min(...since) : null;
}

/** Any CFS answer, good or bad (timeouts included): the loop is getting somewhere. */
export function noteCfsAnswer(t: CreatingTrack, now: number): void {
  t.lastCfsAnswerAt = now;
}

/** One create, lookup or completion PATCH and its result (undefined = it succeeded). */
export function noteAttempt(t: CreatingTrack, now: number, what: string, err?: unknown): void {
  const e = isCfsError(err) ? err : undefined;
  if (e?.kind === 'aborted') return;
  t.lastAttemptAt = now;
  // A 404 lookup or PATCH, a 409 or 400 create: an answer about the record, neither trouble nor proof CFS is well.
  if (e !== undefined && isRecordAnswer(what, e)) return;
  const kind = what.startsWith('PATCH') ? 'patch' : 'create';
  const was = t.trouble[kind];
  if (e === undefined) {
    if (kind === 'create' && was !== null && what.startsWith('POST')) t.recoveredAt = now;
    if (kind === 'patch' || what.startsWith('POST')) t.trouble[kind] = null;
    return;
  }
  const state = e.kind === 'http' || e.kind === 'invalid-response' ? 'cfs_refusing' : 'cfs_timeout';
  const how =
    e.kind === 'http'
      ? `answered ${e.status ?? '?'}`
      : e.kind === 'invalid-response'
        ? 'answered nonsense'
        : `failed (${e.kind})`;
  // the call as it was sent (the client's route: the base URL's path and the template), not the caller's name for it
  const line = `${e.method} ${e.route} ${how}`;
  t.trouble[kind] = { state, what: line, count: was?.what === line ? was.count + 1 : 1, since: was?.since ?? now };
}

/**
 * A POST answered 404 or 5xx is CFS refusing; a 409 (the name exists) or a 400 (this batch's request is invalid,
 * e.g. an unknown configuration: its own retry delay applies, no probing) is about the batch; a lookup or PATCH
 * answered 404 speaks of the record only.
 */
function isRecordAnswer(what: string, e: CfsError): boolean {
  if (e.kind !== 'http') return false;
  if (what.startsWith('POST')) return e.status === 409 || e.status === 400;
  return e.isNotFound;
}

export interface CreatingView {
  state: CreatingState;
  reason: string;
  /** Monotonic. */
  nextAttemptAt: number | null;
}

/** Pure: the state line, most binding cause first. */
export function creatingView(s: BatcherState, now: number, tally: BookTally = s.book.tally()): CreatingView {
  const next = nextAttempt(s, now, tally.earliestAttemptAt);
  if (s.options.batcher_disable)
    return { state: 'disabled', reason: 'batcher_disable is true in the CFS options', nextAttemptAt: null };
  const held = uncertainCreating(0, s.intentsHeldUntil, now);
  if (held !== null) return { ...held, nextAttemptAt: s.intentsHeldUntil };
  if (isBackingOff(s.backoff, now)) {
    return {
      state: 'backoff',
      reason: `the 20 most recent sessions failed; creation halted for ${s.backoff.currentS} s`,
      nextAttemptAt: backoffUntil(s.backoff, now),
    };
  }
  const t = s.creating.trouble.create ?? (s.completions.size > 0 ? s.creating.trouble.patch : null);
  if (t !== null)
    return { state: t.state, reason: `${t.what} (${t.count} time${t.count === 1 ? '' : 's'})`, nextAttemptAt: next };
  const uncertain = tally.uncertain;
  if (uncertain > 0)
    return { state: 'uncertain', reason: `${uncertain} session creates with an unknown outcome`, nextAttemptAt: next };
  if (s.pacing.limited !== null)
    return { state: 'paced', reason: s.pacing.limited.reason, nextAttemptAt: s.pacing.limited.until ?? next };
  if (tally.queued === 0 && s.completions.size === 0)
    return { state: 'idle', reason: 'nothing to send', nextAttemptAt: null };
  return { state: 'ok', reason: 'creating sessions as batches fill', nextAttemptAt: next };
}

/** The next cycle, or later when every waiting batch is held by its retry delay. */
function nextAttempt(s: BatcherState, now: number, earliest: number): number | null {
  if (earliest === Number.POSITIVE_INFINITY && s.completions.size === 0) return null;
  const cycle = s.nextCycleAt ?? now;
  // A batch held by its retry delay is still probed once a cycle while CFS is in trouble (phases/send.ts).
  return s.creating.trouble.create !== null || s.completions.size > 0 ? cycle : Math.max(cycle, earliest);
}

/** The CFS port with creates, lookups and PATCHes recorded as attempts, and every answer as progress. */
export function trackAttempts(
  c: CfsApi,
  t: CreatingTrack,
  now: () => number,
  onAnswer: () => void = () => undefined,
): CfsApi {
  const answered = (err?: unknown): void => {
    if (!(isCfsError(err) && err.kind === 'aborted')) {
      noteCfsAnswer(t, now());
      onAnswer();
    }
  };
  const attempt = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      const r = await call();
      noteAttempt(t, now(), what);
      answered();
      return r;
    } catch (err) {
      noteAttempt(t, now(), what, err);
      answered(err);
      throw err;
    }
  };
  const answer = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      const r = await call();
      answered();
      return r;
    } catch (err) {
      answered(err);
      throw err;
    }
  };
  async function* pages<T>(gen: AsyncIterable<T>): AsyncGenerator<T> {
    try {
      for await (const p of gen) {
        answered();
        yield p;
      }
    } catch (err) {
      answered(err);
      throw err;
    }
  }
  return {
    listComponents: (...a) => pages(c.listComponents(...a)),
    listSessions: (...a) => pages(c.listSessions(...a)),
    listAllSessions: (...a) => answer(() => c.listAllSessions(...a)),
    getSession: (...a) => attempt('GET /v3/sessions/{name}', () => c.getSession(...a)),
    createSession: (...a) => attempt('POST /v3/sessions', () => c.createSession(...a)),
    deleteSession: (...a) => answer(() => c.deleteSession(...a)),
    getOptions: (...a) => answer(() => c.getOptions(...a)),
    patchOptions: (...a) => answer(() => c.patchOptions(...a)),
    patchComponent: (...a) => attempt('PATCH /v3/components/{id}', () => c.patchComponent(...a)),
  };
}
