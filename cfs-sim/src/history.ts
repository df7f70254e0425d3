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

/** Counts over the whole history (benchmarks read it instead of every entry). */
export interface HistorySummary {
  sessions: number;
  /** Sessions pending now (created, not started, not ended), and the most there ever were at once. */
  pending: number;
  pendingPeak: number;
  running: number;
  complete: number;
  /** Sessions deleted while still pending (the batcher's stuck-in-pending deletions, or anyone's). */
  deletedWhilePending: number;
  /** Hosts of the sessions still active (pending or running). */
  activeHosts: number;
}

/** Created, never started, not ended. */
function isWaiting(e: HistoryEntry): boolean {
  return e.status === 'pending' && e.ended_ms === null;
}

export class SessionHistory {
  private readonly entries = new Map<string, HistoryEntry>();
  private seq = 0;
  /** Kept as events happen: a peak read from timestamps afterwards could not order events within a millisecond. */
  private waiting = 0;
  private waitingPeak = 0;

  record(s: Session, mode: string, nowMs: number, extra: RecordExtra = {}): void {
    const before = this.entries.get(s.name);
    if (before && isWaiting(before)) this.waiting -= 1;
    this.waiting += 1;
    this.waitingPeak = Math.max(this.waitingPeak, this.waiting);
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
    const wasWaiting = isWaiting(e);
    Object.assign(e, patch);
    const ended =
      (patch.completed_ms !== undefined && patch.completed_ms !== null) ||
      (patch.deleted_ms !== undefined && patch.deleted_ms !== null);
    if (ended && e.ended_seq === null) {
      e.ended_seq = ++this.seq;
      e.ended_ms = (patch.completed_ms ?? patch.deleted_ms) as number;
    }
    if (wasWaiting && !isWaiting(e)) this.waiting -= 1;
  }

  summary(): HistorySummary {
    const out: HistorySummary = {
      sessions: this.entries.size,
      pending: this.waiting,
      pendingPeak: this.waitingPeak,
      running: 0,
      complete: 0,
      deletedWhilePending: 0,
      activeHosts: 0,
    };
    for (const e of this.entries.values()) {
      if (e.ended_ms === null && e.status === 'running') out.running += 1;
      if (e.status === 'complete') out.complete += 1;
      if (e.deleted_ms !== null && e.running_ms === null && e.completed_ms === null) out.deletedWhilePending += 1;
      if (e.ended_ms === null) out.activeHosts += e.hosts.length;
    }
    return out;
  }

  get(name: string): HistoryEntry | undefined {
    return this.entries.get(name);
  }

  all(): HistoryEntry[] {
    return [...this.entries.values()].sort((a, b) => a.created_ms - b.created_ms || (a.name < b.name ? -1 : 1));
  }

  clear(): void {
    this.entries.clear();
    this.waiting = 0;
    this.waitingPeak = 0;
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
