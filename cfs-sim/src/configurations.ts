/** Configurations: GET one/list, PUT with branch->commit and the conflicting-layers rule. */
import { createHash } from 'node:crypto';
import { parseBool, parseLimit, qstr } from './params';
import { ProblemError } from './problem';
import { configurationInput, parseBody } from './schemas';
import { pageKeys } from './sorted-keys';
import type { SimState } from './state';
import { utcStamp } from './time';
import type { Configuration } from './types';

export function configurationNotFound(name: string): ProblemError {
  return new ProblemError(404, 'Configuration not found', `Configuration ${name} could not be found`);
}

/** The simulator has no git server: a branch resolves to a stable fake commit. */
export function fakeCommit(repo: string, branch: string): string {
  return createHash('sha1').update(`${repo}#${branch}`).digest('hex');
}

export function putConfiguration(
  state: SimState,
  name: string,
  body: unknown,
  rawQuery: Record<string, unknown>,
  nowMs: number,
): Configuration {
  const input = parseBody(configurationInput, body);
  const dropBranches = parseBool(qstr(rawQuery, 'drop_branches'), 'drop_branches') ?? false;
  const layers = (input.layers ?? []).map((l) => {
    const out = { ...l };
    if (out.branch && !out.commit) out.commit = fakeCommit(out.clone_url ?? out.source ?? '', out.branch);
    if (dropBranches) delete out.branch;
    return out;
  });
  const seen = new Set<string>();
  for (const l of layers) {
    const key = `${l.clone_url ?? l.source ?? ''}\u0000${l.playbook}`;
    if (seen.has(key)) {
      throw new ProblemError(
        400,
        'Error with conflicting layers',
        `Two layers use the same repository and playbook (${l.clone_url ?? l.source}, ${l.playbook})`,
      );
    }
    seen.add(key);
  }
  const { name: _ignored, ...rest } = input;
  const config: Configuration = { ...rest, name, last_updated: utcStamp(nowMs), layers };
  state.putConfiguration(config);
  return config;
}

export function getConfiguration(state: SimState, name: string): Configuration {
  const c = state.configurations.get(name);
  if (!c) throw configurationNotFound(name);
  return c;
}

export function listConfigurations(state: SimState, rawQuery: Record<string, unknown>) {
  const size = state.effectiveOptions().default_page_size;
  const limit = parseLimit(qstr(rawQuery, 'limit'), typeof size === 'number' && size >= 1 ? size : 1000);
  const afterId = qstr(rawQuery, 'after_id') ?? '';
  const inUse = parseBool(qstr(rawQuery, 'in_use'), 'in_use') ?? null;
  let used: Set<string> | null = null;
  if (inUse !== null) {
    used = new Set();
    for (const c of state.components.values()) if (c.desired_config) used.add(c.desired_config);
  }
  const page = pageKeys(state.configurationKeys.values(), afterId, limit, (name) => {
    if (used && used.has(name) !== inUse) return undefined;
    return state.configurations.get(name);
  });
  return {
    configurations: page.items,
    next: page.nextAfter === null ? null : { limit, after_id: page.nextAfter, in_use: inUse },
  };
}
