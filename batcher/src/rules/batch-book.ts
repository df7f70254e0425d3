/**
 * The batch state machine and the busy-component registry (no I/O). Every change of a batch's state goes through
 * here: filed (queued), create refused or unknown (retry delay, uncertain under its name), session adopted (active,
 * with the session's actual members), restored from a previous instance's create intents, session ended or name
 * retired (released).
 *
 * A component belongs to at most one batch at a time, whether that batch is still queued, has a session in CFS, was
 * rebuilt at start-up, or has a session create whose outcome is unknown. That single `owner` map is what keeps a
 * component out of two active sessions (the original forgot rebuilt members).
 */
import type { BatchComponent } from './component';
import { DEFAULT_TUNING } from '../config';
import { batchState, retryDelayMs, type Batch, type BatchState, type RetryPolicy } from './batch';

export type AddOutcome = 'added' | 'refreshed' | 'moved' | 'busy';

export type BookTally = Record<BatchState, number> & { earliestAttemptAt: number };

export class BatchBook {
  private readonly batches = new Map<number, Batch>();
  /** Queued batches by key, in creation order (only these accept members). */
  private readonly queuedByKey = new Map<string, Batch[]>();
  private readonly owner = new Map<string, Batch>();
  private nextId = 1;

  constructor(private readonly retry: RetryPolicy = DEFAULT_TUNING) {}

  all(): Batch[] {
    return [...this.batches.values()];
  }

  get size(): number {
    return this.batches.size;
  }

  /** Is the batch still in the book (a queued batch whose last member left is released)? */
  has(b: Batch): boolean {
    return this.batches.get(b.id) === b;
  }

  ownerOf(id: string): Batch | undefined {
    return this.owner.get(id);
  }

  count(state: BatchState): number {
    let n = 0;
    for (const b of this.batches.values()) if (batchState(b) === state) n++;
    return n;
  }

  /** The batches by state and the earliest retry of one without a session, in one pass (read at every heartbeat). */
  tally(): BookTally {
    const t: BookTally = { queued: 0, uncertain: 0, active: 0, earliestAttemptAt: Number.POSITIVE_INFINITY };
    for (const b of this.batches.values()) {
      const state = batchState(b);
      t[state] += 1;
      if (state !== 'active' && b.nextAttemptAt < t.earliestAttemptAt) t.earliestAttemptAt = b.nextAttemptAt;
    }
    return t;
  }

  /**
   * Files a pending component. A member of an uncertain/active batch is busy. A queued member whose key or desired
   * state changed is moved (so a queued batch never holds stale data); otherwise its snapshot is refreshed.
   */
  add(c: BatchComponent, batchSize: number, now: number): AddOutcome {
    const current = this.owner.get(c.id);
    let moved = false;
    if (current) {
      if (batchState(current) === 'uncertain' && current.key === c.batchKey) current.refreshed.set(c.id, c);
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
    for (const b of this.queuedBatches()) this.pruneBatch(b, seen, released);
    return released;
  }

  /** The queued batches now (a copy: pruning may release some of them). */
  queuedBatches(): Batch[] {
    return [...this.queuedByKey.values()].flat();
  }

  /**
   * prune() for one batch, adding the ids released to `released`: a caller walking every queued batch can give the
   * event loop a turn between two of them, the book whole at each.
   */
  pruneBatch(b: Batch, seen: ReadonlySet<string>, released: string[]): void {
    if (!this.has(b) || batchState(b) !== 'queued') return;
    for (const id of [...b.members.keys()]) {
      if (!seen.has(id)) {
        this.removeMember(b, id);
        released.push(id);
      }
    }
  }

  /** A queued member found no longer pending (or unusable) when read by id: out of its batch, free again. */
  dropQueued(id: string): boolean {
    const b = this.owner.get(id);
    if (!b || batchState(b) !== 'queued') return false;
    this.removeMember(b, id);
    return true;
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

  /** A collect starts: what it sees pending decides which members of an uncertain batch may be re-POSTed. */
  beginCollect(): void {
    for (const b of this.batches.values()) b.refreshed.clear();
  }

  /**
   * A POST under `name` whose outcome is unknown: the batch keeps the name and every member busy until `horizonAt`
   * at least (each new attempt under the name moves it on).
   */
  markUncertain(b: Batch, name: string, horizonAt: number, exists = false): void {
    this.unqueue(b);
    b.uncertainName = name;
    b.horizonAt = Math.max(b.horizonAt, horizonAt);
    b.knownToExist ||= exists;
  }

  /**
   * A create intent of a previous instance that CFS does not show yet: its members become busy under its name, as
   * an uncertain batch (a member already busy stays with its holder and passes to this batch when that one ends).
   */
  addUncertain(
    name: string,
    key: string,
    configName: string,
    configLimit: string,
    ids: readonly string[],
    horizonAt: number,
    now: number,
  ): Batch {
    const b = this.newBatch(key, configName, configLimit, now, true);
    b.plannedAt = now;
    this.markUncertain(b, name, horizonAt);
    for (const id of ids) {
      b.members.set(id, null);
      if (!this.owner.has(id)) this.owner.set(id, b);
    }
    return b;
  }

  /**
   * The batch's session exists and targets `actual` (the session's own ansible limit, or the members just POSTed):
   * only those stay in the batch; the others are free again (a later collect files them anew). `snapshots`
   * replaces held snapshots with fresher ones where given.
   */
  adopt(
    b: Batch,
    name: string,
    now: number,
    actual?: readonly string[],
    snapshots?: ReadonlyMap<string, BatchComponent>,
  ): void {
    if (actual) {
      const keep = new Set(actual);
      for (const id of [...b.members.keys()]) if (!keep.has(id)) this.dropMember(b, id);
    }
    if (snapshots) for (const [id, c] of snapshots) if (b.members.has(id)) b.members.set(id, c);
    this.markActive(b, name, now);
  }

  /** A create failed (or its lookup did): no attempt before the retry delay, which doubles up to its cap. */
  retryLater(b: Batch, now: number): void {
    b.createFailures += 1;
    b.nextAttemptAt = now + retryDelayMs(b.createFailures, this.retry);
  }

  /** The batch's session now exists in CFS (created, or found after an uncertain create). */
  markActive(b: Batch, name: string, now: number): void {
    this.unqueue(b);
    b.uncertainName = null;
    b.knownToExist = false;
    b.refreshed.clear();
    b.sessionName = name;
    b.sessionStart = now;
    b.createFailures = 0;
    b.nextAttemptAt = 0;
  }

  /** Drops a batch and frees its members (a member also held by another batch passes to it). */
  release(b: Batch): void {
    if (!this.batches.delete(b.id)) return;
    this.unqueue(b);
    for (const id of b.members.keys()) this.passOwner(b, id);
  }

  /** Cheap consistency check; a non-null answer names a bug (the process should restart rather than schedule wrongly). */
  inconsistency(): string | null {
    for (const b of this.batches.values()) {
      const problem = this.inconsistencyOf(b);
      if (problem !== null) return problem;
    }
    return null;
  }

  /** inconsistency() for one batch (a caller walking all() can give the event loop a turn between two). */
  inconsistencyOf(b: Batch): string | null {
    if (batchState(b) !== 'queued') return null;
    if (b.members.size === 0) return `empty queued batch ${b.id}`;
    for (const id of b.members.keys()) {
      if (this.owner.get(id) !== b) return `component ${id} is queued in batch ${b.id} but owned elsewhere`;
    }
    return null;
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
      sessionStatus: null,
      sessionStatusAt: 0,
      uncertainName: null,
      horizonAt: 0,
      knownToExist: false,
      refreshed: new Map(),
      plannedName: null,
      plannedAt: 0,
      createFailures: 0,
      nextAttemptAt: 0,
      rebuilt,
    };
    this.batches.set(b.id, b);
    return b;
  }

  /** Takes a member out of a batch in any state; another batch holding it becomes its owner. */
  private dropMember(b: Batch, id: string): void {
    b.members.delete(id);
    this.passOwner(b, id);
  }

  /** `b` no longer holds `id`: another batch listing it (rebuilt or restored) becomes its owner, else it is free. */
  private passOwner(b: Batch, id: string): void {
    if (this.owner.get(id) !== b) return;
    this.owner.delete(id);
    for (const other of this.batches.values()) {
      if (other !== b && other.members.has(id)) {
        this.owner.set(id, other);
        break;
      }
    }
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
