/**
 * The record behind the heartbeat's `creating` and `progress` (pure): every create, lookup and completion PATCH is
 * noted as an attempt (by a wrapper around the CFS port, cfs-port.ts, so the phases need not know), every CFS answer
 * as progress. The state line is derived from it and the book (state-view.ts). The sidecar reads a batcher that
 * keeps trying as CFS trouble, and one that stops trying as a stalled loop.
 */
import { isCfsError, type CfsError } from '@cfs-batcher/shared';

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
