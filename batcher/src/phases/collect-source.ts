/**
 * Where collect's records come from, and what it can skip.
 *
 * A component already busy in a session needs nothing but its id (the book answers `busy`; the original skipped it
 * too, `if c in manager.components: continue`), and one already queued needs nothing but proof that it is still
 * pending: send reads the members of a batch again by id right before POSTing it (send/refresh.ts) whenever its
 * records are older than the cycle's collect. At steady state that is almost every pending component, and a full
 * record (config and state details) is ~600 bytes of JSON to download, decode, parse and check: a steady cycle at 50k
 * pending reads 31 MB and costs about 1.1 s of CPU with full pages, 10.5 MB and 0.4-0.5 s with the lean listing
 * (the budget is 0.45 s). So:
 * - full listing: enabled pending components with config and state details, as the original reads every loop;
 *   busy ones are dropped before any per-record work. Used while most pending components are unknown to the book
 *   (first cycle, a new wave of work), where it needs the fewest requests.
 * - lean listing: the same list without details (`config_details=false&state_details=false`: id, enabled,
 *   desired_config, error_count, tags, status), then the full record, by id (`ids=`, chunked) in the same cycle, of
 *   only the components the book does not hold, the members of uncertain creates, and the queued members whose
 *   configuration name or tags changed: new work is seen as fast as before.
 * The batch key (configuration, pending layer indices, latest state status) and the completion snapshot (latest
 * timestamp, desired-state hash) come from full records in both cases: the lean listing carries neither.
 */
import { isCfsError, type ComponentFilter, type ComponentPage } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logComponents } from '../log';
import { batchState } from '../rules/batch';
import type { BatchBook } from '../rules/batch-book';
import type { BatchComponent } from '../rules/component';

/**
 * Lean listing when at most this share of the last collection was unknown to the book (neither busy nor queued):
 * below it the lean pages plus the id reads pull fewer bytes than the full pages (a lean record is ~1/3 of a full
 * one), at a few extra requests.
 */
export const LEAN_MAX_NOT_BUSY_SHARE = 0.25;

/**
 * A lean record is about a third of a full one, so a lean page of this many times the records is no bigger for CFS
 * to build and send than a full page, and a third of the requests (each one a scan of every component key in CFS).
 */
export const LEAN_PAGE_FACTOR = 3;
/** CFS's `default_page_size` default: the page size the server uses for a list without `limit`. */
const SERVER_DEFAULT_PAGE_SIZE = 1000;

/** Enabled pending components with config and state details (also send's read of queued members by id). */
export const FULL_LISTING: Readonly<ComponentFilter> = Object.freeze({
  enabled: true,
  status: 'pending',
  config_details: true,
  state_details: true,
});
const LEAN: ComponentFilter = { enabled: true, status: 'pending', config_details: false, state_details: false };

/** An answer refusing the request (not a timeout or an unreachable CFS: the full listing would not fare better). */
function refusedByServer(err: unknown): boolean {
  return isCfsError(err) && (err.kind === 'http' || err.kind === 'invalid-response');
}

/**
 * Is the component held by a created session (created or rebuilt), i.e. nothing of its record is needed? Members of
 * an uncertain create are not: their refreshed records decide what a repeated POST under the same name carries.
 */
export function isBusy(book: BatchBook, id: string): boolean {
  const b = book.ownerOf(id);
  return b !== undefined && batchState(b) === 'active';
}

/** Members of batches with a created session (approximate when a rebuilt component is in two sessions). */
export function busyCount(book: BatchBook): number {
  let n = 0;
  for (const b of book.all()) if (batchState(b) === 'active') n += b.members.size;
  return n;
}

/** Members of batches with a created session or queued: the ones a lean record can stand for. */
export function knownCount(book: BatchBook): number {
  let n = 0;
  for (const b of book.all()) if (batchState(b) !== 'uncertain') n += b.members.size;
  return n;
}

/** Pure: lean listing when the last collection saw pending components and few of them were unknown to the book. */
export function useLeanListing(lastPendingSeen: number, known: number): boolean {
  if (lastPendingSeen <= 0 || known <= 0) return false;
  return Math.max(0, lastPendingSeen - known) <= lastPendingSeen * LEAN_MAX_NOT_BUSY_SHARE;
}

/**
 * Pure: does a lean record still match the queued member's snapshot, as far as it shows (configuration name, tags)?
 * Layers and latest state are not in it; send reads them again before the batch is POSTed.
 */
export function leanMatches(raw: ComponentPage['components'][number], snap: BatchComponent | null): boolean {
  if (snap === null || raw.desired_config !== snap.configName) return false;
  const tags = raw.tags && typeof raw.tags === 'object' ? raw.tags : {};
  const keys = Object.keys(tags);
  if (keys.length !== Object.keys(snap.tags).length) return false;
  return keys.every((k) => snap.tags[k] === tags[k]);
}

/** Needs nothing but its id this cycle: busy in a created session, or queued and unchanged as far as `raw` shows. */
function knownAlready(book: BatchBook, raw: ComponentPage['components'][number], lean: boolean): boolean {
  const b = book.ownerOf(raw.id);
  if (b === undefined) return false;
  const state = batchState(b);
  if (state === 'active') return true;
  return lean && state === 'queued' && leanMatches(raw, b.members.get(raw.id) ?? null);
}

/**
 * Pages of full records of the enabled pending components collect must read; the others only go into `seen`.
 * Invalid records are passed on as the client reported them.
 */
export async function* pendingRecords(
  ctx: PhaseContext,
  seen: Set<string>,
  signal?: AbortSignal,
): AsyncGenerator<ComponentPage> {
  const { state } = ctx;
  const o = { signal, ...(ctx.tuning.pageSize > 0 ? { pageSize: ctx.tuning.pageSize } : {}) };
  const needed = (page: ComponentPage, lean: boolean): ComponentPage => {
    logComponents.debug(`Received data for ${page.components.length} components`);
    const components: ComponentPage['components'] = [];
    for (const raw of page.components) {
      if (raw.enabled === false || !knownAlready(state.book, raw, lean)) components.push(raw);
      else seen.add(raw.id);
    }
    return { components, invalid: page.invalid };
  };
  const full = async function* (): AsyncGenerator<ComponentPage> {
    for await (const page of ctx.client.listComponents(FULL_LISTING, o)) yield needed(page, false);
  };
  if (state.leanListingRefused || !useLeanListing(state.pendingSeen, knownCount(state.book))) {
    yield* full();
    return;
  }
  const wanted: string[] = [];
  const leanPageSize = LEAN_PAGE_FACTOR * (ctx.tuning.pageSize > 0 ? ctx.tuning.pageSize : SERVER_DEFAULT_PAGE_SIZE);
  try {
    for await (const page of ctx.client.listComponents(LEAN, { ...o, pageSize: leanPageSize })) {
      const lean = needed(page, true);
      for (const raw of lean.components) if (raw.enabled !== false) wanted.push(raw.id);
      if (lean.invalid.length > 0) yield { components: [], invalid: lean.invalid };
    }
  } catch (err) {
    if (!refusedByServer(err)) throw err;
    // The full listing the original uses decides: if it works, this server cannot list without details.
    yield* full();
    state.leanListingRefused = true;
    logComponents.warn(
      `Listing components without details failed (${(err as Error).message}); reading full records from now on`,
    );
    return;
  }
  if (wanted.length === 0) return;
  // Still filtered: a component that stopped being pending meanwhile is not returned, so it is pruned as before.
  for await (const page of ctx.client.listComponents({ ...FULL_LISTING, ids: wanted }, o)) yield needed(page, false);
}
