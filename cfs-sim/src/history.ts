/**
 * Every session ever created, kept after deletes, with its members as they were at creation and the moments it
 * became active (created), running and ended, so tests can check the invariants across a whole run from the
 * simulator alone.
 */
import type { MemberSnapshot } from './snapshot';
import type { Session, SessionStatus, Succeeded } from './types';

export interface RecordExtra {
  members?: Record<string, MemberSnapshot>;
  /** `phase:type` of the fault that hit the POST (e.g. `after:reset`, `late:late-commit`). */
  fault?: string;
  /** When the POST arrived (a late commit is created later). */
  receivedMs?: number;
}

export interface HistoryEntry {
  name: string;
  configuration: string;
  configuration_limit: string;
  ansible_limit: string;
  /** Hosts named in ansible_limit, split. */
  hosts: string[];
  tags: Record<string, string>;
  /** ansible_limit members that were components at creation, as they were then. */
  members: Record<string, MemberSnapshot>;
  mode: string;
  fault: string | null;
  received_ms: number | null;
  /** Active from created_ms (pending counts) until ended_ms (complete or deleted, whichever came first). */
  created_ms: number;
  running_ms: number | null;
  completed_ms: number | null;
  deleted_ms: number | null;
  ended_ms: number | null;
  status: SessionStatus;
  succeeded: Succeeded;
  /** Event order of creation and of completion/deletion: timestamps tie within a millisecond, the order does not. */
  created_seq: number;
  ended_seq: number | null;
}

export class SessionHistory {
  private readonly entries = new Map<string, HistoryEntry>();
  private seq = 0;

  record(s: Session, mode: string, nowMs: number, extra: RecordExtra = {}): void {
    this.entries.set(s.name, {
      name: s.name,
      configuration: s.configuration.name,
      configuration_limit: s.configuration.limit,
      ansible_limit: s.ansible.limit,
      hosts: s.ansible.limit.split(',').filter((h) => h !== ''),
      tags: { ...s.tags },
      members: extra.members ?? {},
      mode,
      fault: extra.fault ?? null,
      received_ms: extra.receivedMs ?? null,
      created_ms: nowMs,
      running_ms: null,
      completed_ms: null,
      deleted_ms: null,
      ended_ms: null,
      status: 'pending',
      succeeded: 'none',
      created_seq: ++this.seq,
      ended_seq: null,
    });
  }

  update(name: string, patch: Partial<HistoryEntry>): void {
    const e = this.entries.get(name);
    if (!e) return;
    Object.assign(e, patch);
    const ended =
      (patch.completed_ms !== undefined && patch.completed_ms !== null) ||
      (patch.deleted_ms !== undefined && patch.deleted_ms !== null);
    if (ended && e.ended_seq === null) {
      e.ended_seq = ++this.seq;
      e.ended_ms = (patch.completed_ms ?? patch.deleted_ms) as number;
    }
  }

  get(name: string): HistoryEntry | undefined {
    return this.entries.get(name);
  }

  all(): HistoryEntry[] {
    return [...this.entries.values()].sort((a, b) => a.created_ms - b.created_ms || (a.name < b.name ? -1 : 1));
  }

  clear(): void {
    this.entries.clear();
  }

  /** Sessions active (created, not complete, not deleted) at `t`. */
  activeAt(t: number): HistoryEntry[] {
    return this.all().filter(
      (e) => e.created_ms <= t && (e.completed_ms ?? Infinity) > t && (e.deleted_ms ?? Infinity) > t,
    );
  }

  /**
   * Invariant check: a component is never in two sessions that are active at the same time.
   * Returns the violations (empty when the invariant holds).
   */
  overlappingSessions(): Array<{ component: string; sessions: [string, string] }> {
    const out: Array<{ component: string; sessions: [string, string] }> = [];
    const byHost = new Map<string, HistoryEntry[]>();
    for (const e of this.all()) for (const h of e.hosts) byHost.set(h, [...(byHost.get(h) ?? []), e]);
    for (const [host, list] of byHost) {
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length; j++) {
          const a = list[i]!;
          const b = list[j]!;
          const aEnd = a.ended_seq ?? Infinity;
          const bEnd = b.ended_seq ?? Infinity;
          if (a.created_seq < bEnd && b.created_seq < aEnd) out.push({ component: host, sessions: [a.name, b.name] });
        }
      }
    }
    return out;
  }
}
