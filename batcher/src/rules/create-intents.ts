/**
 * Session creates whose outcome is unknown (pure): what a failed POST proves, who a session really targets, and the
 * create-intents file (the names a batcher was about to POST, kept on the shared volume so a restarted instance can
 * tell a late commit of its predecessor from a free component).
 *
 * The session NAME is the idempotency key: CFS answers 409 for an existing name, so one name holds at most one
 * session whatever the timing. A duplicate can only come from sending members under a NEW name while an OLD name's
 * POST could still land; so a name is retired only once adopted, proven absent, or past the commit horizon.
 */
import type { CfsError, CfsSession, SessionCreate } from '@cfs-batcher/shared';

export const INTENTS_FORMAT = 1;
export const INTENTS_FILE = 'create-intents.json';

/** What a failed POST /v3/sessions proves. */
export type CreateOutcome = 'not_created' | 'exists' | 'uncertain';

/**
 * 409 = the name exists. A 4xx refusal proves nothing was created, except 404 (an API pod in a rolling upgrade
 * answers it for a POST it may have forwarded), 408 and 499 (the server gave up mid-way). A request that never left
 * (connection refused) was not created. Anything else (5xx, reset, timeout, a 201 that is not a session) may have.
 */
export function createOutcome(err: CfsError): CreateOutcome {
  if (err.kind === 'http' && err.status === 409) return 'exists';
  if (err.kind === 'http' && err.status !== undefined && err.status >= 400 && err.status < 500) {
    return err.status === 404 || err.status === 408 || err.status === 499 ? 'uncertain' : 'not_created';
  }
  return err.kind !== 'http' && err.notSent ? 'not_created' : 'uncertain';
}

/** The ids a session really targets (its ansible limit); null when the document does not say. */
export function sessionMembers(s: Pick<CfsSession, 'ansible'>): string[] | null {
  const limit = s.ansible?.limit;
  if (typeof limit !== 'string') return null;
  const ids = [
    ...new Set(
      limit
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    ),
  ];
  return ids.length > 0 ? ids : null;
}

/**
 * For the heartbeat's `creating` field (written by the loop): 'uncertain' while a create's outcome is unknown or
 * creates are held back after an unreadable intents file; null otherwise (the loop says why else it is not creating).
 */
export function uncertainCreating(
  uncertainBatches: number,
  heldUntil: number,
  now: number,
): { state: 'uncertain'; reason: string } | null {
  if (now < heldUntil)
    return {
      state: 'uncertain',
      reason: 'create intents of the previous instance are unreadable; holding creates back',
    };
  if (uncertainBatches > 0)
    return {
      state: 'uncertain',
      reason: `${uncertainBatches} session creates with unknown outcome; their components stay busy`,
    };
  return null;
}

export interface CreateIntent {
  name: string;
  /** When it was recorded (epoch ms; informational: a restored intent gets a whole horizon from the restart). */
  at_ms: number;
  /** The batch key (configuration, limit, latest status): members still of this key may be re-POSTed. */
  key: string;
  configuration_name: string;
  configuration_limit: string;
  /** Every component the name may target: held busy until the name resolves. */
  members: string[];
  body: SessionCreate;
}

export function serializeIntents(intents: readonly CreateIntent[], writtenAtMs: number): string {
  return JSON.stringify({ format: INTENTS_FORMAT, written_at_ms: writtenAtMs, intents });
}

export type IntentsParse = { ok: true; intents: CreateIntent[] } | { ok: false; problem: string };

const isStr = (v: unknown): v is string => typeof v === 'string';

function checkIntent(v: unknown, i: number): CreateIntent | string {
  if (v === null || typeof v !== 'object') return `intents[${i}] is not an object`;
  const r = v as Record<string, unknown>;
  if (!isStr(r.name) || r.name === '') return `intents[${i}].name is missing`;
  if (typeof r.at_ms !== 'number') return `intents[${i}].at_ms is not a number`;
  for (const k of ['key', 'configuration_name', 'configuration_limit'] as const)
    if (!isStr(r[k])) return `intents[${i}].${k} is not a string`;
  if (!Array.isArray(r.members) || !r.members.every(isStr)) return `intents[${i}].members is not a list of ids`;
  if (r.body === null || typeof r.body !== 'object') return `intents[${i}].body is not an object`;
  return r as unknown as CreateIntent;
}

/** Pure: the file's text -> its intents, or what is wrong with it (the caller then holds creates back). */
export function parseIntents(text: string): IntentsParse {
  if (text.trim() === '') return { ok: false, problem: 'the file is empty' };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not JSON (${(err as Error).message})` };
  }
  const d = data as Record<string, unknown> | null;
  if (d === null || typeof d !== 'object' || d.format !== INTENTS_FORMAT)
    return { ok: false, problem: `not a format ${INTENTS_FORMAT} intents document` };
  if (!Array.isArray(d.intents)) return { ok: false, problem: 'intents is not a list' };
  const intents: CreateIntent[] = [];
  for (const [i, v] of d.intents.entries()) {
    const r = checkIntent(v, i);
    if (typeof r === 'string') return { ok: false, problem: r };
    intents.push(r);
  }
  return { ok: true, intents };
}
