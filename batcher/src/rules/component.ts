/**
 * A pending component as the batcher needs it, validated from a raw CFS record (pure).
 *
 * The original raised KeyError on a record missing `error_count`, `desired_config` or a layer's `commit`/`playbook`,
 * which aborted scheduling for everyone. Here such a record is a rejection with a reason, logged and skipped.
 */
import { createHash } from 'node:crypto';
import type { CfsComponent } from '@cfs-batcher/shared';
import type { InternPool } from './intern';

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
  /** Frozen; may be shared with other components. */
  tags: Readonly<Record<string, string>>;
  /** Frozen; may be shared with other components. */
  pendingLayers: readonly LayerRef[];
  enabled: boolean;
  /** The server's computed status ('' when absent). */
  configurationStatus: string;
  /** When this record was read from CFS (monotonic ms; 0 when not known): send POSTs only records read lately. */
  readAt: number;
}

export type ComponentResult = { ok: true; component: BatchComponent } | { ok: false; id: string; reason: string };

export function batchKeyOf(configName: string, configLimit: string, latestStatus: string): string {
  return `${configName}:${configLimit}:${latestStatus}`;
}

/** Stable digest of what a component is asked to run; a change means "desired state changed meanwhile". */
export function desiredStateHash(layers: ReadonlyArray<{ commit: string; playbook: string }>): string {
  return sha1Hex(layers.map((l) => l.commit + l.playbook).join(':'));
}

const sha1Hex = (text: string): string => createHash('sha1').update(text).digest('hex');

const reject = (id: string, reason: string): ComponentResult => ({ ok: false, id, reason });

/**
 * Why an id cannot go into an Ansible limit or an `ids=` list, or null. A comma splits it into other (real) hosts,
 * whitespace is trimmed or split by Ansible and CFS alike, and `:` `&` `!` `*` `?` `[` `~` are limit pattern syntax:
 * any of them would run or read the wrong nodes.
 */
export function idProblem(id: string): string | null {
  if (id.trim() === '') return 'empty id';
  if (id.includes(',')) return 'id contains a comma (it cannot be expressed in an Ansible limit)';
  if (/\s/.test(id)) return 'id contains whitespace (it cannot be expressed in an Ansible limit)';
  if (/[:&!*?[\]]/.test(id) || id.startsWith('~')) return 'id contains Ansible limit pattern syntax';
  return null;
}

/** Length-prefixed, so distinct field lists never give the same pool key whatever characters they hold. */
const keyPart = (s: string): string => `${s.length}:${s}`;

const EMPTY_TAGS: Readonly<Record<string, string>> = Object.freeze({});

/** A frozen copy of the tags, shared through the pool by exact content (key order included). */
function tagsOf(raw: unknown, pool: InternPool | undefined): Readonly<Record<string, string>> {
  if (!raw || typeof raw !== 'object') return EMPTY_TAGS;
  const entries = Object.entries(raw as Record<string, string>);
  if (entries.length === 0) return EMPTY_TAGS;
  const copy = (): Readonly<Record<string, string>> => Object.freeze({ ...(raw as Record<string, string>) });
  if (!pool) return copy();
  return pool.value('tags', entries.map(([k, v]) => keyPart(k) + keyPart(String(v))).join(''), copy);
}

/**
 * Validates one record. `requirePending` (collection) also insists on at least one pending layer; completion and
 * rebuild handling read records in any status. With a `pool`, repeated values (names, layers, tags, digests) are
 * shared between components instead of copied per record; the result is the same either way.
 */
export function toBatchComponent(
  raw: CfsComponent,
  requirePending = true,
  pool?: InternPool,
  readAt = 0,
): ComponentResult {
  const id = typeof raw.id === 'string' ? raw.id : '';
  if (id === '') return reject('(no id)', 'missing id');
  const badId = idProblem(id);
  if (badId !== null) return reject(id, badId);
  if (typeof raw.desired_config !== 'string' || raw.desired_config === '') return reject(id, 'missing desired_config');
  if (typeof raw.error_count !== 'number' || !Number.isInteger(raw.error_count) || raw.error_count < 0) {
    return reject(id, 'missing or invalid error_count');
  }
  if (!Array.isArray(raw.desired_state)) return reject(id, 'missing desired_state (config_details)');
  const share = (s: string): string => (pool ? pool.str(s) : s);
  let hashed = '';
  let pendingKey = '';
  const pending: LayerRef[] = [];
  for (const [index, layer] of raw.desired_state.entries()) {
    if (typeof layer.commit !== 'string' || layer.commit === '')
      return reject(id, `desired_state[${index}] has no commit`);
    if (typeof layer.playbook !== 'string' || layer.playbook === '')
      return reject(id, `desired_state[${index}] has no playbook`);
    hashed = index === 0 ? layer.commit + layer.playbook : `${hashed}:${layer.commit}${layer.playbook}`;
    if (typeof layer.status === 'string' && layer.status.toLowerCase() === 'pending') {
      if (typeof layer.clone_url !== 'string' || layer.clone_url === '') {
        return reject(id, `pending desired_state[${index}] has no clone_url`);
      }
      pending.push({ index, clone_url: layer.clone_url, playbook: layer.playbook, commit: layer.commit });
      pendingKey += `${index}:${keyPart(layer.clone_url)}${keyPart(layer.playbook)}${keyPart(layer.commit)}`;
    }
  }
  if (requirePending && pending.length === 0) return reject(id, 'no pending layer');
  const state = Array.isArray(raw.state) ? raw.state : [];
  const latest = state.length > 0 ? state[state.length - 1] : undefined;
  const latestStatus = share(typeof latest?.status === 'string' ? latest.status : '');
  const latestTimestamp = typeof latest?.last_updated === 'string' ? latest.last_updated : '';
  const configName = share(raw.desired_config);
  const configLimit = share(pending.map((l) => l.index).join(','));
  const freezeLayers = (): readonly LayerRef[] =>
    Object.freeze(
      pending.map((l) =>
        Object.freeze({
          index: l.index,
          clone_url: share(l.clone_url),
          playbook: share(l.playbook),
          commit: share(l.commit),
        }),
      ),
    );
  return {
    ok: true,
    component: {
      id,
      configName,
      configLimit,
      latestStatus,
      latestTimestamp,
      desiredStateHash: pool ? pool.value('hash', hashed, () => sha1Hex(hashed)) : sha1Hex(hashed),
      batchKey: share(batchKeyOf(configName, configLimit, latestStatus)),
      errorCount: raw.error_count,
      tags: tagsOf(raw.tags, pool),
      pendingLayers: pool ? pool.value('layers', pendingKey, freezeLayers) : freezeLayers(),
      enabled: raw.enabled === true,
      configurationStatus: share(typeof raw.configuration_status === 'string' ? raw.configuration_status : ''),
      readAt,
    },
  };
}

/** Is the record (as the server computed it) still pending? Falls back to layer statuses if the field is absent. */
export function isStillPending(c: BatchComponent): boolean {
  if (c.configurationStatus !== '') return c.configurationStatus.toLowerCase() === 'pending';
  return c.pendingLayers.length > 0;
}
