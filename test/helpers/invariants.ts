/**
 * The session invariants every e2e case checks, as one pure function over the simulator's session history.
 *
 * 1. A component is in at most one active session at any time (active = created, not yet complete or deleted).
 * 2. A session holds between 1 and batch_size components, each once.
 * 3. Its members share the desired configuration (= the session's configuration), the pending layers
 *    (= its configuration_limit) and the status of their latest state entry, as they were when it was created.
 * 4. Its tags are exactly the tags every member has with the same value.
 * Rules 3 and 4 need each member's state at creation time (`members`); a session without it is reported only when
 * `requireMembers` is set.
 */

export interface MemberSnapshot {
  desired_config?: string;
  /** Comma-joined indices of the desired layers that were pending, e.g. "0,2". */
  pending_layers: string;
  /** state[-1].status, '' when the component had no state. */
  latest_status: string;
  tags: Record<string, string>;
}

export interface SessionRecord {
  name: string;
  configuration: string;
  configuration_limit: string;
  hosts: string[];
  tags: Record<string, string>;
  created_ms: number;
  completed_ms: number | null;
  deleted_ms: number | null;
  members?: Record<string, MemberSnapshot>;
}

export type Rule =
  | 'overlap'
  | 'batch_size'
  | 'empty'
  | 'duplicate_member'
  | 'desired_config'
  | 'pending_layers'
  | 'latest_status'
  | 'tags'
  | 'missing_member_snapshot';

export interface Violation {
  rule: Rule;
  session: string;
  detail: string;
}

export interface InvariantOptions {
  /** Largest batch_size in force during the run. */
  maxBatchSize: number;
  requireMembers?: boolean;
}

function endOf(s: SessionRecord): number {
  return Math.min(s.completed_ms ?? Infinity, s.deleted_ms ?? Infinity);
}

function sameTags(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

/** Tags every snapshot has with the same value. */
export function commonTags(members: MemberSnapshot[]): Record<string, string> {
  if (members.length === 0) return {};
  const out: Record<string, string> = { ...members[0]!.tags };
  for (const m of members.slice(1)) for (const [k, v] of Object.entries(out)) if (m.tags[k] !== v) delete out[k];
  return out;
}

function overlaps(sessions: readonly SessionRecord[]): Violation[] {
  const out: Violation[] = [];
  const byHost = new Map<string, SessionRecord[]>();
  for (const s of sessions) for (const h of new Set(s.hosts)) byHost.set(h, [...(byHost.get(h) ?? []), s]);
  for (const [host, list] of byHost) {
    list.sort((a, b) => a.created_ms - b.created_ms);
    // Sweep: each session must start at or after the end of every earlier one holding this host.
    let prev: SessionRecord | undefined;
    for (const s of list) {
      if (prev && s.created_ms < endOf(prev)) {
        out.push({
          rule: 'overlap',
          session: s.name,
          detail: `component ${host} is in ${s.name} (created ${s.created_ms}) while ${prev.name} (created ${prev.created_ms}, ended ${endOf(prev) === Infinity ? 'never' : endOf(prev)}) is active`,
        });
      }
      if (!prev || endOf(s) > endOf(prev)) prev = s;
    }
  }
  return out;
}

function memberRules(s: SessionRecord, requireMembers: boolean): Violation[] {
  const out: Violation[] = [];
  if (!s.members) {
    if (requireMembers)
      out.push({ rule: 'missing_member_snapshot', session: s.name, detail: 'no member snapshot recorded' });
    return out;
  }
  const snaps: MemberSnapshot[] = [];
  for (const h of s.hosts) {
    const m = s.members[h];
    if (!m) {
      if (requireMembers) out.push({ rule: 'missing_member_snapshot', session: s.name, detail: `no snapshot of ${h}` });
      continue;
    }
    snaps.push(m);
    if (m.desired_config !== undefined && m.desired_config !== s.configuration) {
      out.push({
        rule: 'desired_config',
        session: s.name,
        detail: `${h} wants ${m.desired_config}, session runs ${s.configuration}`,
      });
    }
    if (m.pending_layers !== s.configuration_limit) {
      out.push({
        rule: 'pending_layers',
        session: s.name,
        detail: `${h} had pending layers "${m.pending_layers}", session limit "${s.configuration_limit}"`,
      });
    }
  }
  const statuses = new Set(snaps.map((m) => m.latest_status));
  if (statuses.size > 1) {
    out.push({
      rule: 'latest_status',
      session: s.name,
      detail: `members' latest statuses differ: ${[...statuses].map((x) => JSON.stringify(x)).join(', ')}`,
    });
  }
  if (snaps.length === s.hosts.length && snaps.length > 0) {
    const want = commonTags(snaps);
    if (!sameTags(want, s.tags)) {
      out.push({
        rule: 'tags',
        session: s.name,
        detail: `tags ${JSON.stringify(s.tags)}, members share ${JSON.stringify(want)}`,
      });
    }
  }
  return out;
}

/** Pure: every violation of the invariants in a session history (empty when all hold). */
export function checkInvariants(sessions: readonly SessionRecord[], o: InvariantOptions): Violation[] {
  const out: Violation[] = [...overlaps(sessions)];
  for (const s of sessions) {
    if (s.hosts.length === 0) out.push({ rule: 'empty', session: s.name, detail: 'session targets no component' });
    if (s.hosts.length > o.maxBatchSize) {
      out.push({
        rule: 'batch_size',
        session: s.name,
        detail: `${s.hosts.length} components, batch_size ${o.maxBatchSize}`,
      });
    }
    const dup = s.hosts.filter((h, i) => s.hosts.indexOf(h) !== i);
    if (dup.length > 0)
      out.push({ rule: 'duplicate_member', session: s.name, detail: `listed twice: ${[...new Set(dup)].join(',')}` });
    out.push(...memberRules(s, o.requireMembers ?? false));
  }
  return out;
}

/** Throws with the first violations spelled out; returns the number of sessions checked. */
export function assertInvariants(sessions: readonly SessionRecord[], o: InvariantOptions): number {
  const v = checkInvariants(sessions, o);
  if (v.length > 0) {
    const lines = v.slice(0, 15).map((x) => `  ${x.rule} ${x.session}: ${x.detail}`);
    throw new Error(`${v.length} invariant violation(s) over ${sessions.length} sessions:\n${lines.join('\n')}`);
  }
  return sessions.length;
}
