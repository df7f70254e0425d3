/**
 * Where the batches live and who holds each component (no I/O): the storage under the BatchBook (batch-book.ts),
 * which makes every change.
 *
 * A component belongs to at most one batch at a time, whether that batch is still queued, has a session in CFS, was
 * rebuilt at start-up, or has a session create whose outcome is unknown. That single `owner` map is what keeps a
 * component out of two active sessions (the original forgot rebuilt members).
 */
import { batchState, type Batch, type BatchState } from './batch';
import type { BatchComponent } from './component';

/** A batch as the book changes it. */
export type Editable = { -readonly [K in keyof Batch]: Batch[K] } & {
  readonly members: Map<string, BatchComponent | null>;
  readonly refreshed: Map<string, BatchComponent>;
};

export type BookTally = Record<BatchState, number> & { earliestAttemptAt: number };

export class BatchRegistry {
  protected readonly batches = new Map<number, Editable>();
  /** Queued batches by key, in creation order (only these accept members). */
  protected readonly queuedByKey = new Map<string, Editable[]>();
  protected readonly owner = new Map<string, Editable>();
  /**
   * The batches listing a component that another batch owns, in creation order: only a rebuilt session or a restored
   * create intent does, at start-up. Kept so that passing ownership on reads this list instead of every batch (that
   * scan, per member of each batch released, was quadratic: seconds for one cycle's completions at 100k pending).
   */
  private readonly waiting = new Map<string, Editable[]>();
  private nextId = 1;

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

  /** The queued batches now (a copy: pruning may release some of them). */
  queuedBatches(): Batch[] {
    return [...this.queuedByKey.values()].flat();
  }

  /** Drops a batch and frees its members (a member also held by another batch passes to it). */
  release(batch: Batch): void {
    const b = this.edit(batch);
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

  /** inconsistency() for one batch. */
  private inconsistencyOf(b: Batch): string | null {
    if (batchState(b) !== 'queued') return null;
    if (b.members.size === 0) return `empty queued batch ${b.id}`;
    for (const id of b.members.keys()) {
      if (this.owner.get(id) !== b) return `component ${id} is queued in batch ${b.id} but owned elsewhere`;
    }
    return null;
  }

  /** Every batch is made here (newBatch), so the read-only view handed out is the registry's own editable record. */
  protected edit(b: Batch): Editable {
    return b as Editable;
  }

  protected newBatch(key: string, configName: string, configLimit: string, now: number, rebuilt: boolean): Editable {
    const b: Editable = {
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
  protected dropMember(b: Editable, id: string): void {
    b.members.delete(id);
    this.passOwner(b, id);
  }

  /** `b` lists `id`, which another batch owns: `b` becomes its owner when that one lets it go (passOwner). */
  protected listWaiting(b: Editable, id: string): void {
    const list = this.waiting.get(id);
    if (list) list.push(b);
    else this.waiting.set(id, [b]);
  }

  /** `b` no longer holds `id`: another batch listing it (rebuilt or restored) becomes its owner, else it is free. */
  protected passOwner(b: Editable, id: string): void {
    if (this.owner.get(id) !== b) return;
    this.owner.delete(id);
    const list = this.waiting.get(id);
    if (!list) return;
    // The first still in the book and still listing it; those that dropped it or were released meanwhile go too.
    let i = 0;
    while (i < list.length && !(list[i] !== b && this.has(list[i]!) && list[i]!.members.has(id))) i++;
    const next = list[i];
    list.splice(0, i + 1);
    if (list.length === 0) this.waiting.delete(id);
    if (next) this.owner.set(id, next);
  }

  protected removeMember(b: Editable, id: string): void {
    b.members.delete(id);
    if (this.owner.get(id) === b) this.owner.delete(id);
    if (b.members.size === 0 && batchState(b) === 'queued') this.release(b);
  }

  protected unqueue(b: Editable): void {
    const list = this.queuedByKey.get(b.key);
    if (!list) return;
    const i = list.indexOf(b);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.queuedByKey.delete(b.key);
  }
}
