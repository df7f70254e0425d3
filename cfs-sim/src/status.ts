/**
 * configuration_status exactly as the real server computes it on every read (its
 * _set_status, _get_status and _get_layer_status). Pure: the caller passes the
 * configuration and the two options that matter.
 */
import type { Component, ComponentStatus, ConfigLayer, Configuration } from './types';

/** Ordering used by "worst layer wins". */
const RANK: Record<ComponentStatus, number> = { unconfigured: 0, failed: 1, pending: 2, configured: 3 };

export interface StatusOptions {
  default_batcher_retry_policy?: unknown;
  default_playbook?: unknown;
}

/** The server falls back to 1 when the option is unset or not an integer. */
export function effectiveRetries(comp: Component, opts: StatusOptions): number {
  if (typeof comp.retry_policy === 'number') return comp.retry_policy;
  const opt = opts.default_batcher_retry_policy;
  return typeof opt === 'number' && Number.isInteger(opt) ? opt : 1;
}

export function maxRetriesReached(comp: Component, opts: StatusOptions): boolean {
  const retries = effectiveRetries(comp, opts);
  return retries !== -1 && (comp.error_count ?? 0) >= retries;
}

export function layerStatus(comp: Component, layer: ConfigLayer, opts: StatusOptions, maxed: boolean): ComponentStatus {
  const playbook = layer.playbook || (typeof opts.default_playbook === 'string' ? opts.default_playbook : 'site.yml');
  if (!(layer.commit && layer.clone_url && playbook)) return 'unconfigured';
  const match = (comp.state ?? []).find(
    (s) => s.clone_url === layer.clone_url && s.playbook === playbook && s.commit === layer.commit,
  );
  if (!match) return 'pending';
  if (match.status === 'failed') return maxed ? 'failed' : 'pending';
  if (match.status === 'incomplete') return 'pending';
  return 'configured';
}

export interface ComputedStatus {
  status: ComponentStatus | 'config_deprecated';
  /** Per-layer statuses, in layer order ([] when the configuration is missing). */
  layers: ComponentStatus[];
}

export function computeStatus(comp: Component, config: Configuration | undefined, opts: StatusOptions): ComputedStatus {
  if (!('desired_config' in comp) || comp.desired_config === undefined)
    return { status: 'config_deprecated', layers: [] };
  const maxed = maxRetriesReached(comp, opts);
  if (!config) return { status: (comp.state ?? []).length === 0 ? 'unconfigured' : 'configured', layers: [] };
  let status: ComponentStatus = 'configured';
  const layers: ComponentStatus[] = [];
  for (const layer of config.layers) {
    const ls = layerStatus(comp, layer, opts, maxed);
    layers.push(ls);
    if (RANK[ls] < RANK[status]) status = ls;
  }
  if (status === 'pending' && maxed) status = 'failed';
  return { status, layers };
}
