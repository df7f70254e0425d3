/**
 * Hand-written twins of the zod schemas in schemas.ts, for answers a healthy CFS sends every cycle: they let the
 * client skip zod's copy (at 50k pending components it was ~40% of the bytes allocated per collection) and keep zod
 * itself unloaded (lazy-zod.ts). test/client/record-fast-path.test.ts holds each one to its schema.
 */

/**
 * A check that accepts only records its schema accepts AND returns unchanged (deep-equal, same keys), so a
 * record it passes can be used as parsed without zod's copy. It may refuse more than the schema (then the schema
 * decides, with its own error message), never less.
 */
export type FastCheck = (item: unknown) => boolean;

/** A JSON object (not an array) whose own keys hold no `__proto__`, which zod would drop when copying. */
export function isPlainRecord(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return false;
  return Object.getPrototypeOf(x) === Object.prototype && !Object.prototype.hasOwnProperty.call(x, '__proto__');
}

const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';
const optInt = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isSafeInteger(v));

function isStringMap(x: unknown): boolean {
  if (!isPlainRecord(x)) return false;
  for (const k in x) if (typeof x[k] !== 'string') return false;
  return true;
}

function isStateLayer(x: unknown): boolean {
  return (
    isPlainRecord(x) &&
    typeof x.clone_url === 'string' &&
    typeof x.playbook === 'string' &&
    typeof x.commit === 'string' &&
    typeof x.status === 'string' &&
    optString(x.session_name) &&
    optString(x.last_updated)
  );
}

function isDesiredLayer(x: unknown): boolean {
  return (
    isPlainRecord(x) &&
    optString(x.name) &&
    optString(x.clone_url) &&
    optString(x.source) &&
    optString(x.commit) &&
    optString(x.branch) &&
    optString(x.playbook) &&
    optString(x.status)
  );
}

function optArrayOf(v: unknown, item: (x: unknown) => boolean): boolean {
  if (v === undefined) return true;
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (!item(v[i])) return false; // indices, not every(): holes count
  return true;
}

/**
 * componentSchema's rules written out, for the list hot path: at 50k pending components zod's per-record copy was
 * about 40% of the bytes allocated per collection. test/client/record-fast-path.test.ts holds it to the schema.
 */
export const isPlainComponent: FastCheck = (x) =>
  isPlainRecord(x) &&
  typeof x.id === 'string' &&
  x.id.length >= 1 &&
  optString(x.desired_config) &&
  (x.enabled === undefined || typeof x.enabled === 'boolean') &&
  optInt(x.error_count) &&
  optInt(x.retry_policy) &&
  (x.tags === undefined || isStringMap(x.tags)) &&
  optArrayOf(x.state, isStateLayer) &&
  optArrayOf(x.desired_state, isDesiredLayer) &&
  optString(x.configuration_status) &&
  optString(x.logs);

const optNullableString = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';
// finite: JSON.parse gives Infinity for 1e400, which z.number() refuses
const optNullableNumber = (v: unknown): boolean => v === undefined || v === null || Number.isFinite(v);
const optPlainRecord = (v: unknown, rule: (r: Record<string, unknown>) => boolean): boolean =>
  v === undefined || (isPlainRecord(v) && rule(v));

/** sessionSchema's rules written out: every session list, lookup and create answer passes here. */
export const isPlainSession: FastCheck = (x) =>
  isPlainRecord(x) &&
  typeof x.name === 'string' &&
  x.name.length >= 1 &&
  optPlainRecord(x.configuration, (c) => optString(c.name) && optNullableString(c.limit)) &&
  optPlainRecord(
    x.ansible,
    (a) =>
      optNullableString(a.config) &&
      optNullableString(a.limit) &&
      optNullableNumber(a.verbosity) &&
      optNullableString(a.passthrough),
  ) &&
  optPlainRecord(x.target, (t) => optString(t.definition)) &&
  optPlainRecord(
    x.status,
    (st) =>
      (st.artifacts === undefined || st.artifacts === null || Array.isArray(st.artifacts)) &&
      optPlainRecord(
        st.session,
        (s) =>
          optNullableString(s.job) &&
          optNullableString(s.start_time) &&
          optNullableString(s.completion_time) &&
          optString(s.status) &&
          optString(s.succeeded),
      ),
  ) &&
  (x.tags === undefined || x.tags === null || isPlainRecord(x.tags));

/** A list page's envelope: the records' array (each record is judged on its own) and `next`. */
function isPage(key: 'components' | 'sessions'): FastCheck {
  return (x) =>
    isPlainRecord(x) && Array.isArray(x[key]) && (x.next === undefined || x.next === null || isPlainRecord(x.next));
}
export const isComponentPage = isPage('components');
export const isSessionPage = isPage('sessions');

/** The options answer: any JSON object (what each option must hold is rules/options.ts's business). */
export const isPlainOptions: FastCheck = (x) => isPlainRecord(x);

/** For answers too rare to deserve a twin: zod always decides. */
export const neverFast: FastCheck = () => false;
