/**
 * Request-body schemas mirroring the OpenAPI spec (additionalProperties:false => strict objects, ranges, patterns).
 * The simulator enforces these itself so that it rejects what the real server rejects even without the
 * optional spec validator.
 */
import { z } from 'zod';
import { ProblemError } from './problem';

const noSemicolonOrSpace = /^[^\s;]*$/;
export const SESSION_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const stateLayerInput = z.strictObject({
  clone_url: z.string(),
  playbook: z.string(),
  commit: z.string(),
  status: z.enum(['applied', 'failed', 'skipped', 'incomplete']).optional(),
  session_name: z.string().optional(),
  last_updated: z.string().optional(),
});

export const stateAppendInput = z.strictObject({
  clone_url: z.string(),
  playbook: z.string(),
  commit: z.string(),
  status: z.enum(['applied', 'failed', 'skipped']).optional(),
  session_name: z.string().optional(),
});

/** V3ComponentData as a request (read-only desired_state/configuration_status/logs are refused). */
export const componentInput = z.strictObject({
  id: z.string().min(1).optional(),
  state: z.array(stateLayerInput).optional(),
  state_append: stateAppendInput.optional(),
  desired_config: z.string().max(60).optional(),
  error_count: z.number().int().optional(),
  retry_policy: z.number().int().optional(),
  enabled: z.boolean().optional(),
  tags: z.record(z.string(), z.string()).optional(),
});
export type ComponentInput = z.infer<typeof componentInput>;

export const componentsFilterInput = z.strictObject({
  ids: z.string().optional(),
  status: z.enum(['unconfigured', 'pending', 'failed', 'configured', '']).optional(),
  enabled: z.boolean().optional(),
  config_name: z.string().optional(),
  tags: z.string().optional(),
});

export const componentsUpdateInput = z.object({ patch: componentInput, filters: componentsFilterInput });

const targetInput = z.strictObject({
  definition: z.enum(['image', 'spec', 'repo', 'dynamic']).optional(),
  groups: z
    .array(z.object({ name: z.string(), members: z.array(z.string()) }))
    .nullable()
    .optional(),
  image_map: z.array(z.object({ source_id: z.string(), result_name: z.string() })).optional(),
});

export const sessionCreateInput = z.strictObject({
  name: z.string().min(1).max(45).regex(SESSION_NAME_PATTERN, 'does not match the session name pattern'),
  configuration_name: z.string().min(1).max(60),
  configuration_limit: z.string().optional(),
  ansible_limit: z.string().regex(noSemicolonOrSpace).optional(),
  ansible_config: z.string().optional(),
  ansible_verbosity: z.number().int().min(0).max(4).optional(),
  ansible_passthrough: z.string().optional(),
  target: targetInput.optional(),
  tags: z.record(z.string(), z.string()).optional(),
  debug_on_failure: z.boolean().optional(),
});
export type SessionCreateInput = z.infer<typeof sessionCreateInput>;

export const optionsInput = z.strictObject({
  hardware_sync_interval: z.number().int().min(1).optional(),
  batcher_check_interval: z.number().int().min(1).optional(),
  batch_size: z.number().int().min(1).optional(),
  batch_window: z.number().int().min(0).optional(),
  default_batcher_retry_policy: z.number().int().min(0).optional(),
  default_ansible_config: z.string().max(60).optional(),
  session_ttl: z
    .string()
    .max(10)
    .regex(/^(?:[0-9]+[mMhHdDwW]){0,1}$/)
    .optional(),
  additional_inventory_url: z.string().max(240).regex(noSemicolonOrSpace).optional(),
  additional_inventory_source: z.string().max(60).optional(),
  batcher_max_backoff: z.number().int().min(0).optional(),
  batcher_disable: z.boolean().optional(),
  batcher_pending_timeout: z.number().int().min(1).optional(),
  logging_level: z.enum(['DEBUG', 'INFO', 'WARNING', 'ERROR']).optional(),
  default_page_size: z.number().int().min(1).optional(),
  debug_wait_time: z.number().int().min(0).optional(),
  include_ara_links: z.boolean().optional(),
});
export type OptionsInput = z.infer<typeof optionsInput>;

const layerInput = z.strictObject({
  name: z.string().min(1).max(45).optional(),
  clone_url: z.string().regex(noSemicolonOrSpace).optional(),
  source: z.string().optional(),
  playbook: z.string().regex(noSemicolonOrSpace),
  commit: z
    .string()
    .regex(/^[a-f0-9]{40}$/)
    .optional(),
  branch: z.string().regex(noSemicolonOrSpace).optional(),
  special_parameters: z.strictObject({ ims_require_dkms: z.boolean().optional() }).optional(),
});

export const configurationInput = z.strictObject({
  name: z.string().optional(),
  description: z.string().optional(),
  tenant_name: z.string().optional(),
  layers: z.array(layerInput).optional(),
  additional_inventory: z.record(z.string(), z.unknown()).optional(),
});
export type ConfigurationInput = z.infer<typeof configurationInput>;

/** Parses or throws a 400 whose detail names the offending field, like a connexion schema error. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const res = schema.safeParse(body);
  if (res.success) return res.data;
  const detail = res.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    .join('; ');
  throw ProblemError.badRequest(detail);
}
