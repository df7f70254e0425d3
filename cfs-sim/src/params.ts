/** Query-parameter parsing with the real server's leniency (connexion): booleans in any case, empty = unset. */
import { ProblemError } from './problem';

type Query = Record<string, unknown>;

/** First value of a query parameter (express gives arrays for repeated keys; only the first is used). */
export function qstr(q: Query, name: string): string | undefined {
  const v = q[name];
  const first: unknown = Array.isArray(v) ? v[0] : v;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : JSON.stringify(first);
}

export function parseBool(raw: string | undefined, name: string): boolean | undefined {
  if (raw === undefined || raw === '') return undefined;
  const v = raw.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw ProblemError.badRequest(`'${raw}' is not of type 'boolean' - '${name}'`);
}

export function parseLimit(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw ProblemError.badRequest(`'${raw}' is not of type 'integer' - 'limit'`);
  const n = Number(raw);
  if (n < 1) throw ProblemError.badRequest(`${n} is less than the minimum of 1 - 'limit'`);
  return n;
}

export function parseEnum<T extends string>(raw: string | undefined, allowed: readonly T[], name: string): T | '' {
  if (raw === undefined || raw === '') return '';
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw ProblemError.badRequest(`'${raw}' is not one of ${JSON.stringify(allowed)} - '${name}'`);
}

/** `k=v,k2=v2`; every pair must have '=' and a key (400 otherwise, like the real server). */
export function parseTags(raw: string | undefined): Record<string, string> {
  const tags: Record<string, string> = {};
  if (raw === undefined || raw === '') return tags;
  for (const pair of raw.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw ProblemError.badRequest(`Error parsing the tags provided: '${pair}' is not of the form key=value`);
    tags[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return tags;
}

export function tagsMatch(have: Record<string, string> | undefined, want: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(want)) if (have?.[k] !== v) return false;
  return true;
}

const AGE_UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Ages like `24h`, `3d` (spec pattern `^(?:[0-9]+[mMhHdDwW]){0,1}$`); '' means unset. */
export function parseAge(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const m = /^([0-9]+)([mMhHdDwW])$/.exec(raw);
  if (!m) throw ProblemError.badRequest(`'${raw}' does not match '^(?:[0-9]+[mMhHdDwW]){0,1}$' - '${name}'`);
  return Number(m[1]) * (AGE_UNIT_MS[(m[2] as string).toLowerCase()] as number);
}
