/**
 * Runtime schemas for what CFS v3 answers, after ../shared/reference/cfs-openapi.yaml (V3ComponentData,
 * V3SessionData, V3ComponentDataCollection, V3SessionDataCollection, V3NextData, V3ConfigurationData).
 *
 * Records are loose (unknown keys kept) because the real server returns fields the spec does not list, and strict on
 * the types of the fields this project reads: a record whose `error_count` is a string is rejected, not guessed.
 * Envelopes are strict: a 200 without a `components` or `sessions` array is an invalid response, never a TypeError.
 */
import { z } from 'zod';
import { formatZodIssues } from '../contract';

const stringMap = z.record(z.string(), z.string());

export const stateLayerSchema = z.looseObject({
  clone_url: z.string(),
  playbook: z.string(),
  commit: z.string(),
  status: z.string(),
  session_name: z.string().optional(),
  last_updated: z.string().optional(),
});

/** A configuration layer as the server copies it into `desired_state`, plus its computed status. */
export const desiredLayerSchema = z.looseObject({
  name: z.string().optional(),
  clone_url: z.string().optional(),
  source: z.string().optional(),
  commit: z.string().optional(),
  branch: z.string().optional(),
  playbook: z.string().optional(),
  status: z.string().optional(),
});

export const componentSchema = z.looseObject({
  id: z.string().min(1),
  desired_config: z.string().optional(),
  enabled: z.boolean().optional(),
  error_count: z.number().int().optional(),
  retry_policy: z.number().int().optional(),
  tags: stringMap.optional(),
  state: z.array(stateLayerSchema).optional(),
  desired_state: z.array(desiredLayerSchema).optional(),
  configuration_status: z.string().optional(),
  logs: z.string().optional(),
});

export const sessionSchema = z.looseObject({
  name: z.string().min(1),
  configuration: z.looseObject({ name: z.string().optional(), limit: z.string().nullable().optional() }).optional(),
  ansible: z
    .looseObject({
      config: z.string().nullable().optional(),
      limit: z.string().nullable().optional(),
      verbosity: z.number().nullable().optional(),
      passthrough: z.string().nullable().optional(),
    })
    .optional(),
  target: z.looseObject({ definition: z.string().optional(), groups: z.unknown().optional() }).optional(),
  status: z
    .looseObject({
      artifacts: z.array(z.unknown()).nullable().optional(),
      session: z
        .looseObject({
          job: z.string().nullable().optional(),
          start_time: z.string().nullable().optional(),
          completion_time: z.string().nullable().optional(),
          status: z.string().optional(),
          succeeded: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
  // Fields the batcher never reads are not allowed to hide a session from it (an unreadable in-flight session
  // would leave its members unprotected after a restart): accept any value there.
  tags: z.record(z.string(), z.unknown()).nullable().optional(),
  debug_on_failure: z.unknown().optional(),
  logs: z.unknown().optional(),
});

export const configurationSchema = z.looseObject({
  name: z.string(),
  layers: z.array(desiredLayerSchema).optional(),
  last_updated: z.string().optional(),
});

/** `next`: the server's full parameter set with after_id moved on; null on the last page. */
export const nextSchema = z.record(z.string(), z.unknown()).nullable().optional();

export const componentPageSchema = z.looseObject({ components: z.array(z.unknown()), next: nextSchema });
export const sessionPageSchema = z.looseObject({ sessions: z.array(z.unknown()), next: nextSchema });
export const optionsSchema = z.record(z.string(), z.unknown());

export type StateLayer = z.infer<typeof stateLayerSchema>;
export type DesiredLayer = z.infer<typeof desiredLayerSchema>;
export type CfsComponent = z.infer<typeof componentSchema>;
export type CfsSession = z.infer<typeof sessionSchema>;
export type CfsConfiguration = z.infer<typeof configurationSchema>;

/** A record the client refused, with what was wrong; callers log and skip it. */
export interface InvalidRecord {
  index: number;
  id?: string;
  problem: string;
}

/** Formats the first few zod issues as `path: message; ...`. */
export function describeIssues(error: z.ZodError, max = 4): string {
  return formatZodIssues(error, { max });
}

/**
 * A check that accepts only records its schema accepts AND returns unchanged (deep-equal, same keys), so a
 * record it passes can be used as parsed without zod's copy. It may refuse more than the schema (then the schema
 * decides, with its own error message), never less.
 */
export type FastCheck = (item: unknown) => boolean;

/** A JSON object (not an array) whose own keys hold no `__proto__`, which zod would drop when copying. */
function isPlainRecord(x: unknown): x is Record<string, unknown> {
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

/**
 * Validates each record of a page on its own, so one bad record never hides the others. A record `fast` accepts is
 * kept as is (see FastCheck); any other goes through the schema.
 */
export function partitionRecords<T>(
  items: unknown[],
  schema: z.ZodType<T>,
  idKey: string,
  fast?: FastCheck,
): { valid: T[]; invalid: InvalidRecord[] } {
  const valid: T[] = [];
  const invalid: InvalidRecord[] = [];
  items.forEach((item, index) => {
    if (fast?.(item)) {
      valid.push(item as T);
      return;
    }
    const parsed = schema.safeParse(item);
    if (parsed.success) {
      valid.push(parsed.data);
    } else {
      const rawId = item && typeof item === 'object' ? (item as Record<string, unknown>)[idKey] : undefined;
      invalid.push({
        index,
        id: typeof rawId === 'string' ? rawId : undefined,
        problem: describeIssues(parsed.error),
      });
    }
  });
  return { valid, invalid };
}
