/**
 * Where collect's records come from, and what it can skip (issue 15).
 *
 * A component already busy in a session needs nothing but its id (the book answers `busy`; the original skipped it
 * too, `if c in manager.components: continue`), yet at steady state that is almost every pending component, and a
 * full record (config and state details) is ~600 bytes of JSON to download, decode, parse and check. So:
 * - full listing: enabled pending components with config and state details, as the original reads every loop;
 *   busy ones are dropped before any per-record work. Used while most pending components are not busy (first cycle,
 *   a new wave of work), where it needs the fewest requests.
 * - lean listing: the same list without details (`config_details=false&state_details=false`: id, enabled,
 *   error_count, tags, status), then the full record of only the components not busy, by id (`ids=`, chunked), in
 *   the same cycle: new work is seen as fast as before.
 * The batch key (configuration, pending layer indices, latest state status) and the completion snapshot (latest
 * timestamp, desired-state hash) come from the full record in both cases (notes 4.2, 4.6).
 */
import { isCfsError, type ComponentFilter, type ComponentPage } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logComponents } from '../log';
import { batchState } from '../rules/batch';
import type { BatchBook } from '../rules/batch-book';

/**
 * Lean listing when at most this share of the last collection was not busy: below it the lean pages plus the
 * id reads pull fewer bytes than the full pages (a lean record is ~1/3 of a full one), at a few extra requests.
 */
export const LEAN_MAX_NOT_BUSY_SHARE = 0.25;

/**
 * A lean record is about a third of a full one, so a lean page of this many times the records is no bigger for CFS
 * to build and send than a full page, and a third of the requests (each one a scan of every component key in CFS).
 */
export const LEAN_PAGE_FACTOR = 3;
/** CFS's `default_page_size` default (notes 1.3), what a list without `limit` gets. */
const SERVER_DEFAULT_PAGE_SIZE = 1000;

const FULL: ComponentFilter = { enabled: true, status: 'pending', config_details: true, state_details: true };
const LEAN: ComponentFilter = { enabled: true, status: 'pending', config_details: false, state_details: false };

/**
 * Batchers whose CFS answered the lean listing with an error the full one did not give (the real server deletes
 * `state` from each record when state_details=false, notes 1.4: a record stored without it would fail the list).
 */
const leanRefused = new WeakSet<object>();

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

/** Pure: lean listing when the last collection saw pending components and few of them were not busy. */
export function useLeanListing(lastPendingSeen: number, busy: number): boolean {
  if (lastPendingSeen <= 0 || busy <= 0) return false;
  return Math.max(0, lastPendingSeen - busy) <= lastPendingSeen * LEAN_MAX_NOT_BUSY_SHARE;
}

/**
 * Pages of full records of enabled pending components that are not busy; busy ones only go into `seen`. Invalid
 * records are passed on as the client reported them.
 */
export async function* pendingRecords(
  ctx: PhaseContext,
  seen: Set<string>,
  signal?: AbortSignal,
): AsyncGenerator<ComponentPage> {
  const { state } = ctx;
  const o = { signal, ...(ctx.tuning.pageSize > 0 ? { pageSize: ctx.tuning.pageSize } : {}) };
  const notBusy = (page: ComponentPage): ComponentPage => {
    logComponents.debug(`Received data for ${page.components.length} components`);
    const components = page.components.filter((raw) => {
      if (raw.enabled === false || !isBusy(state.book, raw.id)) return true;
      seen.add(raw.id);
      return false;
    });
    return { components, invalid: page.invalid };
  };
  const full = async function* (): AsyncGenerator<ComponentPage> {
    for await (const page of ctx.client.listComponents(FULL, o)) yield notBusy(page);
  };
  if (leanRefused.has(state) || !useLeanListing(state.pendingSeen, busyCount(state.book))) {
    yield* full();
    return;
  }
  const wanted: string[] = [];
  const leanPageSize = LEAN_PAGE_FACTOR * (ctx.tuning.pageSize > 0 ? ctx.tuning.pageSize : SERVER_DEFAULT_PAGE_SIZE);
  try {
    for await (const page of ctx.client.listComponents(LEAN, { ...o, pageSize: leanPageSize })) {
      const lean = notBusy(page);
      for (const raw of lean.components) if (raw.enabled !== false) wanted.push(raw.id);
      if (lean.invalid.length > 0) yield { components: [], invalid: lean.invalid };
    }
  } catch (err) {
    if (!refusedByServer(err)) throw err;
    // The full listing the original uses decides: if it works, this server cannot list without details.
    yield* full();
    leanRefused.add(state);
    logComponents.warn(
      `Listing components without details failed (${(err as Error).message}); reading full records from now on`,
    );
    return;
  }
  if (wanted.length === 0) return;
  // Still filtered: a component that stopped being pending meanwhile is not returned, so it is pruned as before.
  for await (const page of ctx.client.listComponents({ ...FULL, ids: wanted }, o)) yield notBusy(page);
}
