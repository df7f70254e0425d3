/**
 * The batch state machine (no I/O). Every change of a batch goes through here (the `Batch` others see is read-only):
 * filed (queued), planned under a name, create refused or unknown (retry delay, uncertain under its name, known to
 * exist), session adopted (active, with the session's actual members), its status seen, restored from a previous
 * instance's create intents, session ended or name retired (released). Where batches live and who holds which
 * component is the registry under it (batch-registry.ts).
 */
import type { BatchComponent } from './component';
import { DEFAULT_TUNING } from '../config';
import { batchState, retryDelayMs, type Batch, type RetryPolicy } from './batch';
import { BatchRegistry } from './batch-registry';

export type AddOutcome = 'added' | 'refreshed' | 'moved' | 'busy';

export class BatchBook extends BatchRegistry {
  constructor(private readonly retry: RetryPolicy = DEFAULT_TUNING) {
    super();
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

  /** prune() for one batch, adding the ids released to `released`. */
  private pruneBatch(batch: Batch, seen: ReadonlySet<string>, released: string[]): void {
    if (!this.has(batch) || batchState(batch) !== 'queued') return;
    const b = this.edit(batch);
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
    members: ReadonlyMap<string, BatchComponent | null>,
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
      if (this.owner.has(id)) {
        alreadyBusy.push(id);
        this.listWaiting(b, id);
      } else this.owner.set(id, b);
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
  markUncertain(batch: Batch, name: string, horizonAt: number, exists = false): void {
    const b = this.edit(batch);
    this.unqueue(b);
    b.uncertainName = name;
    b.horizonAt = Math.max(b.horizonAt, horizonAt);
    b.knownToExist ||= exists;
  }

  /** Uncertain, and CFS says the name exists (409, or a record it cannot read): adopted once its document is read. */
  noteExists(b: Batch): void {
    this.edit(b).knownToExist = true;
  }

  /** The name the batch is (to be) created under: kept from attempt to attempt, so an unchanged plan is not rewritten. */
  plan(batch: Batch, newName: () => string, now: number): string {
    const b = this.edit(batch);
    if (b.plannedName === null) {
      b.plannedName = newName();
      b.plannedAt = now;
    }
    return b.plannedName;
  }

  /** The session's status as check_status last read it (null: it has none yet). */
  noteStatus(b: Batch, status: string | null, now: number): void {
    const e = this.edit(b);
    e.sessionStatus = status;
    e.sessionStatusAt = now;
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
    exists = false,
  ): Batch {
    const b = this.newBatch(key, configName, configLimit, now, true);
    b.plannedAt = now;
    this.markUncertain(b, name, horizonAt, exists);
    for (const id of ids) {
      b.members.set(id, null);
      if (!this.owner.has(id)) this.owner.set(id, b);
      else this.listWaiting(b, id);
    }
    return b;
  }

  /**
   * The batch's session exists and targets `actual` (the session's own ansible limit, or the members just POSTed):
   * only those stay in the batch; the others are free again (a later collect files them anew). `snapshots`
   * replaces held snapshots with fresher ones where given.
   */
  adopt(
    batch: Batch,
    name: string,
    now: number,
    actual?: readonly string[],
    snapshots?: ReadonlyMap<string, BatchComponent>,
  ): void {
    const b = this.edit(batch);
    if (actual) {
      const keep = new Set(actual);
      for (const id of [...b.members.keys()]) if (!keep.has(id)) this.dropMember(b, id);
    }
    if (snapshots) for (const [id, c] of snapshots) if (b.members.has(id)) b.members.set(id, c);
    this.markActive(b, name, now);
  }

  /** A create failed (or its lookup did): no attempt before the retry delay, which doubles up to its cap. */
  retryLater(batch: Batch, now: number): void {
    const b = this.edit(batch);
    b.createFailures += 1;
    b.nextAttemptAt = now + retryDelayMs(b.createFailures, this.retry);
  }

  /** The batch's session now exists in CFS (created, or found after an uncertain create). */
  markActive(batch: Batch, name: string, now: number): void {
    const b = this.edit(batch);
    this.unqueue(b);
    b.refreshed.clear();
    b.uncertainName = null;
    b.knownToExist = false;
    b.sessionName = name;
    b.sessionStart = now;
    b.createFailures = 0;
    b.nextAttemptAt = 0;
  }
}
