/** GET/PATCH/PUT component handlers' logic, independent of express (state in, body out). */
import { applyComponentPatch, replaceComponent } from './component-patch';
import { parseBool, parseEnum, parseLimit, parseTags, qstr, tagsMatch } from './params';
import { ProblemError } from './problem';
import { componentInput, componentsUpdateInput, parseBody } from './schemas';
import { pageKeys } from './sorted-keys';
import type { SimState } from './state';
import { computeStatus } from './status';
import { COMPONENT_STATUSES, type Component, type ComponentStatus } from './types';
import { z } from 'zod';

export interface ViewFlags {
  stateDetails: boolean;
  configDetails: boolean;
}

/** A component as a read returns it: computed configuration_status, optional desired_state and logs. */
export function componentView(
  state: SimState,
  comp: Component,
  flags: ViewFlags,
  status?: ReturnType<typeof computeStatus>,
): Record<string, unknown> {
  const opts = state.effectiveOptions();
  const config = comp.desired_config ? state.configurations.get(comp.desired_config) : undefined;
  const computed = status ?? computeStatus(comp, config, opts);
  const out: Record<string, unknown> = { ...comp, configuration_status: computed.status };
  if (!flags.stateDetails) delete out.state;
  if (flags.configDetails) {
    out.desired_state = config ? config.layers.map((l, i) => ({ ...l, status: computed.layers[i] })) : [];
  }
  if (opts.include_ara_links === true) out.logs = `ara.cmn.site/hosts?name=${comp.id}`;
  return out;
}

export function notFound(id: string): ProblemError {
  return new ProblemError(404, 'Component not found.', `Component ${id} could not be found`);
}

export interface ComponentQuery {
  ids: string;
  status: ComponentStatus | '';
  enabled: boolean | null;
  config_name: string;
  state_details: boolean;
  config_details: boolean;
  tags: string;
  limit: number;
  after_id: string;
}

export function parseComponentQuery(q: Record<string, unknown>, defaultPageSize: number): ComponentQuery {
  return {
    ids: qstr(q, 'ids') ?? '',
    status: parseEnum(qstr(q, 'status'), COMPONENT_STATUSES, 'status'),
    enabled: parseBool(qstr(q, 'enabled'), 'enabled') ?? null,
    config_name: qstr(q, 'config_name') ?? '',
    state_details: parseBool(qstr(q, 'state_details'), 'state_details') ?? false,
    config_details: parseBool(qstr(q, 'config_details'), 'config_details') ?? false,
    tags: qstr(q, 'tags') ?? '',
    limit: parseLimit(qstr(q, 'limit'), defaultPageSize),
    after_id: qstr(q, 'after_id') ?? '',
  };
}

function pageSize(state: SimState): number {
  const v = state.effectiveOptions().default_page_size;
  return typeof v === 'number' && v >= 1 ? v : 1000;
}

/** Predicate for the filters shared by GET list and bulk PATCH; status is computed per read. */
function makeMatcher(
  state: SimState,
  f: { status: string; enabled: boolean | null; config_name: string; tags: Record<string, string> },
) {
  const opts = state.effectiveOptions();
  return (comp: Component): ReturnType<typeof computeStatus> | undefined => {
    if (f.enabled !== null && comp.enabled !== f.enabled) return undefined;
    if (f.config_name !== '' && comp.desired_config !== f.config_name) return undefined;
    if (!tagsMatch(comp.tags, f.tags)) return undefined;
    const config = comp.desired_config ? state.configurations.get(comp.desired_config) : undefined;
    const computed = computeStatus(comp, config, opts);
    if (f.status !== '' && computed.status !== f.status) return undefined;
    return computed;
  };
}

/** Candidate keys: the sorted, de-duplicated `ids` list when given, else every component id. */
function candidateKeys(state: SimState, ids: string): readonly string[] {
  if (ids === '') return state.componentKeys.values();
  return Array.from(new Set(ids.split(',').filter((id) => id !== '' && state.components.has(id)))).sort();
}

export function listComponents(
  state: SimState,
  rawQuery: Record<string, unknown>,
): { components: unknown[]; next: ComponentQuery | null } {
  const q = parseComponentQuery(rawQuery, pageSize(state));
  const matcher = makeMatcher(state, { ...q, tags: parseTags(q.tags) });
  const flags = { stateDetails: q.state_details, configDetails: q.config_details };
  const page = pageKeys(candidateKeys(state, q.ids), q.after_id, q.limit, (id) => {
    const comp = state.components.get(id)!;
    const computed = matcher(comp);
    return computed ? componentView(state, comp, flags, computed) : undefined;
  });
  return { components: page.items, next: page.nextAfter === null ? null : { ...q, after_id: page.nextAfter } };
}

export function getComponent(state: SimState, id: string, rawQuery: Record<string, unknown>): Record<string, unknown> {
  const comp = state.components.get(id);
  if (!comp) throw notFound(id);
  const stateDetails = parseBool(qstr(rawQuery, 'state_details'), 'state_details') ?? false;
  const configDetails = parseBool(qstr(rawQuery, 'config_details'), 'config_details') ?? false;
  return componentView(state, comp, { stateDetails, configDetails });
}

export function patchComponent(state: SimState, id: string, body: unknown, nowMs: number): Component {
  const patch = parseBody(componentInput, body);
  const comp = state.components.get(id);
  if (!comp) throw notFound(id);
  const next = applyComponentPatch(comp, patch, nowMs);
  state.putComponent(next);
  return next;
}

export function putComponent(state: SimState, id: string, body: unknown, nowMs: number): Component {
  const next = replaceComponent(id, parseBody(componentInput, body), nowMs);
  state.putComponent(next);
  return next;
}

/** PUT /v3/components: add or replace a list (cfs-hwsync-agent). */
export function putComponents(state: SimState, body: unknown, nowMs: number): { component_ids: string[] } {
  const list = parseBody(z.array(componentInput.extend({ id: z.string().min(1) })), body);
  for (const c of list) state.putComponent(replaceComponent(c.id, c, nowMs));
  return { component_ids: list.map((c) => c.id) };
}

/** PATCH /v3/components: `{patch, filters}` (BOS) or a list of records with ids. */
export function patchComponents(state: SimState, body: unknown, nowMs: number): { component_ids: string[] } {
  if (Array.isArray(body)) {
    const list = parseBody(z.array(componentInput.extend({ id: z.string().min(1) })), body);
    const missing = list.find((c) => !state.components.has(c.id));
    if (missing) throw notFound(missing.id);
    for (const c of list) state.putComponent(applyComponentPatch(state.components.get(c.id)!, c, nowMs));
    return { component_ids: list.map((c) => c.id) };
  }
  const { patch, filters } = parseBody(componentsUpdateInput, body);
  const matcher = makeMatcher(state, {
    status: filters.status ?? '',
    enabled: filters.enabled ?? null,
    config_name: filters.config_name ?? '',
    tags: parseTags(filters.tags),
  });
  const ids: string[] = [];
  for (const id of candidateKeys(state, filters.ids ?? '')) {
    const comp = state.components.get(id)!;
    if (!matcher(comp)) continue;
    state.putComponent(applyComponentPatch(comp, patch, nowMs));
    ids.push(id);
  }
  return { component_ids: ids };
}
