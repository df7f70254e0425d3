/**
 * A pending component as the batcher needs it, validated from a raw CFS record (pure).
 *
 * The original raised KeyError on a record missing `error_count`, `desired_config` or a layer's `commit`/`playbook`,
 * which aborted scheduling for everyone. Here such a record is a rejection with a reason, logged and skipped.
 */
import { createHash } from 'node:crypto';
import type { CfsComponent } from '@cfs-batcher/shared';

/** The fields of a pending layer a state_append PATCH needs. */
export interface LayerRef {
  index: number;
  clone_url: string;
  playbook: string;
  commit: string;
}

export interface BatchComponent {
  id: string;
  configName: string;
  /** Comma-joined indices of the desired layers whose status is pending, e.g. "1,2". */
  configLimit: string;
  latestStatus: string;
  latestTimestamp: string;
  desiredStateHash: string;
  batchKey: string;
  errorCount: number;
  tags: Record<string, string>;
  pendingLayers: LayerRef[];
  enabled: boolean;
  /** The server's computed status ('' when absent). */
  configurationStatus: string;
}

export type ComponentResult = { ok: true; component: BatchComponent } | { ok: false; id: string; reason: string };

export function batchKeyOf(configName: string, configLimit: string, latestStatus: string): string {
  return `${configName}:${configLimit}:${latestStatus}`;
}

/** Stable digest of what a component is asked to run; a change means "desired state changed meanwhile". */
export function desiredStateHash(layers: ReadonlyArray<{ commit: string; playbook: string }>): string {
  return createHash('sha1')
    .update(layers.map((l) => l.commit + l.playbook).join(':'))
    .digest('hex');
}

const reject = (id: string, reason: string): ComponentResult => ({ ok: false, id, reason });

/**
 * Validates one record. `requirePending` (collection) also insists on at least one pending layer; completion and
 * rebuild handling read records in any status.
 */
export function toBatchComponent(raw: CfsComponent, requirePending = true): ComponentResult {
  const id = typeof raw.id === 'string' ? raw.id : '';
  if (id === '') return reject('(no id)', 'missing id');
  if (typeof raw.desired_config !== 'string' || raw.desired_config === '') return reject(id, 'missing desired_config');
  if (typeof raw.error_count !== 'number' || !Number.isInteger(raw.error_count) || raw.error_count < 0) {
    return reject(id, 'missing or invalid error_count');
  }
  if (!Array.isArray(raw.desired_state)) return reject(id, 'missing desired_state (config_details)');
  const hashed: { commit: string; playbook: string }[] = [];
  const pending: LayerRef[] = [];
  for (const [index, layer] of raw.desired_state.entries()) {
    if (typeof layer.commit !== 'string' || layer.commit === '') return reject(id, `desired_state[${index}] has no commit`);
    if (typeof layer.playbook !== 'string' || layer.playbook === '') return reject(id, `desired_state[${index}] has no playbook`);
    hashed.push({ commit: layer.commit, playbook: layer.playbook });
    if (typeof layer.status === 'string' && layer.status.toLowerCase() === 'pending') {
      if (typeof layer.clone_url !== 'string' || layer.clone_url === '') {
        return reject(id, `pending desired_state[${index}] has no clone_url`);
      }
      pending.push({ index, clone_url: layer.clone_url, playbook: layer.playbook, commit: layer.commit });
    }
  }
  if (requirePending && pending.length === 0) return reject(id, 'no pending layer');
  const state = Array.isArray(raw.state) ? raw.state : [];
  const latest = state.length > 0 ? state[state.length - 1] : undefined;
  const latestStatus = typeof latest?.status === 'string' ? latest.status : '';
  const latestTimestamp = typeof latest?.last_updated === 'string' ? latest.last_updated : '';
  const configLimit = pending.map((l) => l.index).join(',');
  return {
    ok: true,
    component: {
      id,
      configName: raw.desired_config,
      configLimit,
      latestStatus,
      latestTimestamp,
      desiredStateHash: desiredStateHash(hashed),
      batchKey: batchKeyOf(raw.desired_config, configLimit, latestStatus),
      errorCount: raw.error_count,
      tags: raw.tags && typeof raw.tags === 'object' ? { ...raw.tags } : {},
      pendingLayers: pending,
      enabled: raw.enabled === true,
      configurationStatus: typeof raw.configuration_status === 'string' ? raw.configuration_status : '',
    },
  };
}

/** Is the record (as the server computed it) still pending? Falls back to layer statuses if the field is absent. */
export function isStillPending(c: BatchComponent): boolean {
  if (c.configurationStatus !== '') return c.configurationStatus.toLowerCase() === 'pending';
  return c.pendingLayers.length > 0;
}
