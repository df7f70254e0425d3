/**
 * A batch and the rules read from it (no I/O): its state, when it may be sent, which tags its session carries, and
 * how long it waits after a failed create. Its transitions live in the BatchBook (batch-book.ts), the one writer.
 */
import type { BatchComponent } from './component';

/** A batch as everyone but the book sees it: read-only (its changes are the book's verbs, batch-book.ts). */
export interface Batch {
  readonly id: number;
  readonly key: string;
  readonly configName: string;
  readonly configLimit: string;
  /** Snapshot of each member when it joined (or at rebuild; null when CFS had no usable record). */
  readonly members: ReadonlyMap<string, BatchComponent | null>;
  readonly windowStart: number;
  /** Set once CFS holds the session (created, adopted after a lookup, or rebuilt). */
  readonly sessionName: string | null;
  readonly sessionStart: number | null;
  /** The session's status in CFS at check_status's last look (null until it has looked), and when (clock ms). */
  readonly sessionStatus: string | null;
  readonly sessionStatusAt: number;
  /**
   * A POST whose outcome is unknown (timeout, 5xx, 404, reset, odd 201): the batch keeps this name (the
   * idempotency key) and every member busy until the name is adopted or retired (see rules/create-intents.ts).
   */
  readonly uncertainName: string | null;
  /** Uncertain: the latest POST under the name could still commit until then (clock ms). */
  readonly horizonAt: number;
  /** Uncertain: CFS said the name exists (409, or an unreadable record of it) but its document is not read yet. */
  readonly knownToExist: boolean;
  /** Uncertain: members seen pending, enabled and of the same key by this cycle's collect (may be re-POSTed). */
  readonly refreshed: ReadonlyMap<string, BatchComponent>;
  /** The name this batch is (to be) created under, kept across attempts; with when it was first recorded. */
  readonly plannedName: string | null;
  readonly plannedAt: number;
  readonly createFailures: number;
  /** Earliest time (ms) of the next create attempt, after failures. */
  readonly nextAttemptAt: number;
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
  if (b.uncertainName !== null) return false; // resolved by send's own rules, never sent as a new batch
  return b.members.size >= batchSize || now - b.windowStart > batchWindowS * 1000;
}

/** Tags every member has with the same value; undefined when there are none (the POST then omits `tags`). */
export function sharedTags(
  members: Iterable<{ tags: Record<string, string> } | null>,
): Record<string, string> | undefined {
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

/** Per-batch delay after failed creates: initial, doubling on each further failure, capped at max. */
export interface RetryPolicy {
  createRetryInitialMs: number;
  createRetryMaxMs: number;
}

/** Pure: the delay before the next create attempt after `failures` consecutive failures (>= 1). */
export function retryDelayMs(failures: number, p: RetryPolicy): number {
  return Math.min(p.createRetryMaxMs, p.createRetryInitialMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
}
