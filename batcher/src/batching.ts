/**
 * Batches and the busy-component registry (no I/O).
 *
 * A component belongs to at most one batch at a time, whether that batch is still queued, has a session in CFS, was
 * rebuilt at start-up, or has a session create whose outcome is unknown. That single `owner` map is what keeps a
 * component out of two active sessions (the original forgot rebuilt members).
 */
import type { BatchComponent } from './component';

export interface Batch {
  readonly id: number;
  readonly key: string;
  readonly configName: string;
  configLimit: string;
  /** Snapshot of each member when it joined (or at rebuild; null when CFS had no usable record). */
  readonly members: Map<string, BatchComponent | null>;
  readonly windowStart: number;
  /** Set once CFS holds the session (created, adopted after a lookup, or rebuilt). */
  sessionName: string | null;
  sessionStart: number | null;
  /** A POST whose outcome is unknown (timeout, 5xx): look this name up before creating anything else. */
  uncertainName: string | null;
  createFailures: number;
  /** Earliest time (ms) of the next create attempt, after failures. */
  nextAttemptAt: number;
  readonly rebuilt: boolean;
}

export type BatchState = 'queued' | 'uncertain' | 'active';

export function batchState(b: Batch): BatchState {
  if (b.sessionName !== null) return 'active';
  return b.uncertainName !== null ? 'uncertain' : 'queued';
}

/** Strict `>` on the window, as the original: a batch of age exactly batch_window waits one more check. */
export function isReadyToSend(b: Batch, batchSize: number, batchWindowS: number, now: number): boolean {
  if (b.sessionName !== null || b.members.size === 0 || now < b.nextAttemptAt) return false;
  if (b.uncertainName !== null) return true;
  return b.members.size >= batchSize || now - b.windowStart > batchWindowS * 1000;
}

/** Tags every member has with the same value; undefined when there are none (the POST then omits `tags`). */
export function sharedTags(members: Iterable<{ tags: Record<string, string> } | null>): Record<string, string> | undefined {
  let shared: Record<string, string> | undefined;
  for (const m of members) {
    const tags = m?.tags ?? {};
    if (shared === undefined) {
      shared = { ...tags };
      continue;
    }
    for (const [k, v] of Object.entries(shared)) if (tags[k] !== v) delete shared[k];
  }
  return shared && Object.keys(shared).length > 0 ? shared : undefined;
}

export type AddOutcome = 'added' | 'refreshed' | 'moved' | 'busy';

export class BatchBook {
  private readonly batches = new Map<number, Batch>();
  /** Queued batches by key, in creation order (only these accept members). */
  private readonly queuedByKey = new Map<string, Batch[]>();
  private readonly owner = new Map<string, Batch>();
  private nextId = 1;

  all(): Batch[] {
    return [...this.batches.values()];
  }

  get size(): number {
    return this.batches.size;
  }

  ownerOf(id: string): Batch | undefined {
    return this.owner.get(id);
  }

  busyCount(): number {
    return this.owner.size;
  }

  count(state: BatchState): number {
    let n = 0;
    for (const b of this.batches.values()) if (batchState(b) === state) n++;
    return n;
  }

  /**
   * Files a pending component. A member of an uncertain/active batch is busy. A queued member whose key or desired
   * state changed is moved (so a queued batch never holds stale data); otherwise its snapshot is refreshed.
   */
  add(c: BatchComponent, batchSize: number, now: number): AddOutcome {
    const current = this.owner.get(c.id);
    let moved = false;
    if (current) {
      if (batchState(current) !== 'queued') return 'busy';
      const before = current.members.get(c.id);
      if (current.key === c.batchKey && before?.desiredStateHash === c.desiredStateHash) {
        current.members.set(c.id, c);
        return 'refreshed';
      }
      this.removeMember(current, c.id);
      moved = true;
    }
    const candidates = this.queuedByKey.get(c.batchKey) ?? [];
    let target = candidates.find((b) => b.members.size < batchSize);
    if (!target) {
      target = this.newBatch(c.batchKey, c.configName, c.configLimit, now, false);
      candidates.push(target);
      this.queuedByKey.set(c.batchKey, candidates);
    }
    target.members.set(c.id, c);
    this.owner.set(c.id, target);
    return moved ? 'moved' : 'added';
  }

  /** Drops queued members not seen pending+enabled in a complete collection; returns the ids released. */
  prune(seen: ReadonlySet<string>): string[] {
    const released: string[] = [];
    for (const list of [...this.queuedByKey.values()]) {
      for (const b of [...list]) {
        for (const id of [...b.members.keys()]) {
          if (!seen.has(id)) {
            this.removeMember(b, id);
            released.push(id);
          }
        }
      }
    }
    return released;
  }

  /** Registers an incomplete session found at start-up; all its members become busy. */
  addRebuilt(
    sessionName: string,
    configName: string,
    configLimit: string,
    members: Map<string, BatchComponent | null>,
    now: number,
  ): { batch: Batch; alreadyBusy: string[] } {
    const first = [...members.values()].find((m) => m !== null);
    const key = first ? first.batchKey : `${configName}:${configLimit}:`;
    const b = this.newBatch(key, configName, configLimit, now, true);
    b.sessionName = sessionName;
    b.sessionStart = now;
    const alreadyBusy: string[] = [];
    for (const [id, snap] of members) {
      b.members.set(id, snap);
      if (this.owner.has(id)) alreadyBusy.push(id);
      else this.owner.set(id, b);
    }
    return { batch: b, alreadyBusy };
  }

  markUncertain(b: Batch, name: string): void {
    this.unqueue(b);
    b.uncertainName = name;
  }

  /** The batch's session now exists in CFS. */
  markActive(b: Batch, name: string, now: number): void {
    this.unqueue(b);
    b.uncertainName = null;
    b.sessionName = name;
    b.sessionStart = now;
  }

  /** Confirmed not created: the batch is an ordinary queued batch again. */
  requeue(b: Batch): void {
    b.uncertainName = null;
    if (b.sessionName !== null || !this.batches.has(b.id)) return;
    const list = this.queuedByKey.get(b.key) ?? [];
    if (!list.includes(b)) list.push(b);
    this.queuedByKey.set(b.key, list);
  }

  /** Drops a batch and frees its members (a member also held by another batch passes to it). */
  release(b: Batch): void {
    if (!this.batches.delete(b.id)) return;
    this.unqueue(b);
    for (const id of b.members.keys()) {
      if (this.owner.get(id) !== b) continue;
      this.owner.delete(id);
      for (const other of this.batches.values()) {
        if (other.members.has(id)) {
          this.owner.set(id, other);
          break;
        }
      }
    }
  }

  private newBatch(key: string, configName: string, configLimit: string, now: number, rebuilt: boolean): Batch {
    const b: Batch = {
      id: this.nextId++,
      key,
      configName,
      configLimit,
      members: new Map(),
      windowStart: now,
      sessionName: null,
      sessionStart: null,
      uncertainName: null,
      createFailures: 0,
      nextAttemptAt: 0,
      rebuilt,
    };
    this.batches.set(b.id, b);
    return b;
  }

  private removeMember(b: Batch, id: string): void {
    b.members.delete(id);
    if (this.owner.get(id) === b) this.owner.delete(id);
    if (b.members.size === 0 && batchState(b) === 'queued') this.release(b);
  }

  private unqueue(b: Batch): void {
    const list = this.queuedByKey.get(b.key);
    if (!list) return;
    const i = list.indexOf(b);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.queuedByKey.delete(b.key);
  }
}
