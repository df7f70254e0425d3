/**
 * Runtime schemas for what CFS v3 answers, after cfs-sim/contract/cfs-v3.yaml (V3ComponentData,
 * V3SessionData, V3ComponentDataCollection, V3SessionDataCollection, V3NextData, V3ConfigurationData).
 *
 * Records are loose (unknown keys kept) because the real server returns fields the spec does not list, and strict on
 * the types of the fields this project reads: a record whose `error_count` is a string is rejected, not guessed.
 * Envelopes are strict: a 200 without a `components` or `sessions` array is an invalid response, never a TypeError.
 * These schemas are the only definition of each shape: every answer goes through them (with the fast check derived
 * from each, derived-check.ts), and the types are theirs.
 */
import { z } from 'zod';
import { formatZodIssues } from '../contract';
import { safeParseAnswer } from './derived-check';

const stringMap = z.record(z.string(), z.string());

const stateLayerSchema = z.looseObject({
  clone_url: z.string(),
  playbook: z.string(),
  commit: z.string(),
  status: z.string(),
  session_name: z.string().optional(),
  last_updated: z.string().optional(),
});

/** A configuration layer as the server copies it into `desired_state`, plus its computed status. */
const desiredLayerSchema = z.looseObject({
  name: z.string().optional(),
  clone_url: z.string().optional(),
  source: z.string().optional(),
  commit: z.string().optional(),
  branch: z.string().optional(),
  playbook: z.string().optional(),
  status: z.string().optional(),
});

const componentSchema = z.looseObject({
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

const sessionSchema = z.looseObject({
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

const configurationSchema = z.looseObject({
  name: z.string(),
  layers: z.array(desiredLayerSchema).optional(),
  last_updated: z.string().optional(),
});

/** `next`: the server's full parameter set with after_id moved on; null on the last page. */
const nextSchema = z.record(z.string(), z.unknown()).nullable().optional();

/** A list page's envelope; each record of the array is judged on its own (partitionRecords). */
const componentPageSchema = z.looseObject({ components: z.array(z.unknown()), next: nextSchema });
const sessionPageSchema = z.looseObject({ sessions: z.array(z.unknown()), next: nextSchema });
/** The options answer: any JSON object (what each option must hold is batcher/src/rules/options.ts's business). */
const optionsSchema = z.record(z.string(), z.unknown());

export const cfsSchemas = {
  stateLayer: stateLayerSchema,
  desiredLayer: desiredLayerSchema,
  component: componentSchema,
  session: sessionSchema,
  configuration: configurationSchema,
  next: nextSchema,
  componentPage: componentPageSchema,
  sessionPage: sessionPageSchema,
  options: optionsSchema,
} as const;

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

/** Validates each record of a page on its own, so one bad record never hides the others. */
export function partitionRecords<T>(
  items: unknown[],
  schema: z.ZodType<T>,
  idKey: string,
): { valid: T[]; invalid: InvalidRecord[] } {
  const out = { valid: [] as T[], invalid: [] as InvalidRecord[] };
  // indices, not forEach(): a hole in the array is a record too (undefined), refused with its index
  for (let index = 0; index < items.length; index++) judgeRecord(items, index, schema, idKey, out);
  return out;
}

function judgeRecord<T>(
  items: unknown[],
  index: number,
  schema: z.ZodType<T>,
  idKey: string,
  out: { valid: T[]; invalid: InvalidRecord[] },
): void {
  const item = items[index];
  const parsed = safeParseAnswer(schema, item);
  if (parsed.success) {
    out.valid.push(parsed.data);
    return;
  }
  const rawId = item && typeof item === 'object' ? (item as Record<string, unknown>)[idKey] : undefined;
  out.invalid.push({
    index,
    id: typeof rawId === 'string' ? rawId : undefined,
    problem: describeIssues(parsed.error),
  });
}
