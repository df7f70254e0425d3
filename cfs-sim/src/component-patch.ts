/**
 * Component writes as the real server performs them (its _set_auto_fields, patch_dict, _state_append_handler and
 * _tag_cleanup_handler). Pure functions over plain records; `now` is passed in.
 */
import { utcStamp } from './time';
import type { ComponentInput } from './schemas';
import type { Component, StateLayer } from './types';

type Dict = Record<string, unknown>;

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** patch_dict: dicts merge recursively, everything else (lists included) is replaced. */
export function deepMerge(target: Dict, patch: Dict): Dict {
  const out: Dict = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    const cur = out[k];
    out[k] = isDict(cur) && isDict(v) ? deepMerge(cur, v) : structuredClone(v);
  }
  return out;
}

/** _set_auto_fields: stamps state layers and resets error_count when the desired state is (re)set. */
export function setAutoFields(patch: ComponentInput, nowMs: number): ComponentInput {
  const out: ComponentInput = { ...patch };
  if (out.state) out.state = out.state.map((l) => (l.last_updated ? l : { ...l, last_updated: utcStamp(nowMs) }));
  const resetsDesired =
    'desired_config' in out || 'desired_state' in out || (Array.isArray(out.state) && out.state.length === 0);
  if (out.error_count === undefined && resetsDesired) out.error_count = 0;
  return out;
}

/** Legacy `<sha>_failed` / `_incomplete` (also `_skipped`/`_applied`) commit suffixes become a status. */
export function splitCommitSuffix(commit: string, status: string | undefined): { commit: string; status: string } {
  const m = /^(.*)_(failed|incomplete|skipped|applied)$/.exec(commit);
  if (m) return { commit: m[1] as string, status: m[2] as string };
  return { commit, status: status ?? 'applied' };
}

/** _state_append_handler: drop every layer with the same clone_url+playbook, append the new one last. */
export function appendState(
  state: unknown,
  append: NonNullable<ComponentInput['state_append']>,
  nowMs: number,
): StateLayer[] {
  const base = Array.isArray(state) ? (state as StateLayer[]) : [];
  const { commit, status } = splitCommitSuffix(append.commit, append.status);
  const layer: StateLayer = {
    clone_url: append.clone_url,
    playbook: append.playbook,
    commit,
    status,
    session_name: append.session_name ?? '',
    last_updated: utcStamp(nowMs),
  };
  return [...base.filter((l) => !(l.clone_url === layer.clone_url && l.playbook === layer.playbook)), layer];
}

function sameLayer(a: StateLayer, b: StateLayer): boolean {
  return (
    a.clone_url === b.clone_url &&
    a.playbook === b.playbook &&
    a.commit === b.commit &&
    a.status === b.status &&
    a.session_name === b.session_name
  );
}

/** Full PATCH semantics; returns the new stored record (no computed fields). */
export function applyComponentPatch(stored: Component, rawPatch: ComponentInput, nowMs: number): Component {
  const explicitStamps = new Set((rawPatch.state ?? []).map((l, i) => (l.last_updated ? i : -1)));
  const patch = setAutoFields(rawPatch, nowMs);
  const { state_append: append, ...rest } = patch;
  let next = deepMerge(stored, rest) as Component;
  next.id = stored.id;
  if (rest.state && Array.isArray(stored.state)) {
    // CASMCMS-9632: unchanged layers keep their old last_updated.
    const old = stored.state;
    next.state = (next.state ?? []).map((l, i) => {
      if (explicitStamps.has(i)) return l;
      const prev = old.find((o) => sameLayer(o, l));
      return prev ? { ...l, last_updated: prev.last_updated } : l;
    });
  }
  if (rest.state)
    next.state = next.state!.map((l) => ({ ...l, status: l.status ?? 'applied', session_name: l.session_name ?? '' }));
  if (append) next = { ...next, state: appendState(next.state, append, nowMs) };
  if (next.tags) next.tags = Object.fromEntries(Object.entries(next.tags).filter(([, v]) => v !== ''));
  return next;
}

/** PUT semantics: the body replaces the record (auto fields still apply). */
export function replaceComponent(id: string, body: ComponentInput, nowMs: number): Component {
  return applyComponentPatch(
    { id, desired_config: '', state: [], error_count: 0, enabled: true, tags: {} },
    { ...body, id },
    nowMs,
  );
}
