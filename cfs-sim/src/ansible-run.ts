/**
 * What the AEE does when a session's Ansible run ends: the selected layers run in order over the hosts of
 * ansible.limit that exist, and component state is written the way CFS's Ansible callback plugin writes it.
 */
import { applyComponentPatch } from './component-patch';
import type { HostOutcome } from './outcomes';
import type { SimState } from './state';
import type { ConfigLayer, Session } from './types';

/** configuration.limit -> layer indices, as the operator reads it (digits = sorted indices; else names). */
export function selectLayers(limit: string, layers: ConfigLayer[]): number[] {
  const parts = limit
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) return layers.map((_, i) => i);
  if (parts.every((p) => /^\d+$/.test(p))) {
    return Array.from(new Set(parts.map(Number)))
      .filter((i) => i < layers.length)
      .sort((a, b) => a - b);
  }
  return layers.map((l, i) => (l.name && limit.includes(l.name) ? i : -1)).filter((i) => i >= 0);
}

/** The callback plugin's PATCH: suffixed commit, error_count per outcome. */
function writeState(
  state: SimState,
  host: string,
  session: string,
  layer: ConfigLayer,
  defaultPlaybook: string,
  outcome: HostOutcome,
  nowMs: number,
): void {
  const comp = state.components.get(host);
  if (!comp) return;
  const commit = layer.commit ?? '';
  const append = {
    clone_url: layer.clone_url ?? layer.source ?? '',
    playbook: layer.playbook || defaultPlaybook,
    session_name: session,
  };
  const patch =
    outcome === 'fail'
      ? { state_append: { ...append, commit: `${commit}_failed` }, error_count: (comp.error_count ?? 0) + 1 }
      : outcome === 'incomplete'
        ? { state_append: { ...append, commit: `${commit}_incomplete` } }
        : { state_append: { ...append, commit }, error_count: 0 };
  state.putComponent(applyComponentPatch(comp, patch, nowMs));
}

/** Runs the selected layers in order; stops after the first layer any host fails. True when all passed. */
export function runLayers(
  state: SimState,
  s: Session,
  outcomeFor: (host: string, configuration: string, layer: number) => HostOutcome,
  nowMs: number,
): boolean {
  const config = state.configurations.get(s.configuration.name);
  if (!config) return s.configuration.name.startsWith('debug_'); // configuration vanished: the clone step fails
  // DISABLE_STATE_RECORDING: debug_ configurations, passthrough, image targets.
  const record =
    !s.configuration.name.startsWith('debug_') && s.ansible.passthrough === '' && s.target.definition !== 'image';
  const hosts = Array.from(new Set(s.ansible.limit.split(',').filter((h) => state.components.has(h))));
  const configured = state.effectiveOptions().default_playbook;
  const defaultPlaybook = typeof configured === 'string' && configured !== '' ? configured : 'site.yml';
  for (const index of selectLayers(s.configuration.limit, config.layers)) {
    const layer = config.layers[index] as ConfigLayer;
    let layerFailed = false;
    for (const host of hosts) {
      const outcome = outcomeFor(host, config.name, index);
      if (outcome === 'skip') continue;
      if (outcome === 'fail' || outcome === 'incomplete') layerFailed = true;
      if (record) writeState(state, host, s.name, layer, defaultPlaybook, outcome, nowMs);
    }
    if (layerFailed) return false;
  }
  return true;
}
