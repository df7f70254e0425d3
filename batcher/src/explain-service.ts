/**
 * The I/O around the explain rules (rules/explain.ts): validate the id, answer from the loop's state as it is at
 * this instant (a synchronous read between two of the loop's awaits: the loop is neither waited for nor blocked),
 * and only for an id the memory does not hold, one GET of that component from CFS.
 *
 * CFS is protected from a flood of explain requests: each request makes at most one call (no retries), and at most
 * `maxLookups` are in flight at once; a request beyond that is answered 503 with Retry-After at once rather than
 * queued, so a flood costs neither CFS calls nor memory. The lookups use a client of their own that never stamps the
 * heartbeat: an answer to an explain request says nothing about the main loop, and must never make a stopped loop
 * look alive to the sidecar.
 */
import { CfsClient, isCfsError, type CfsClientOptions, type CfsComponent } from '@cfs-batcher/shared';
import { wallOffset, type Clock } from './clock';
import type { BatcherMetrics } from './metrics';
import { explainFromMemory, type ExplainClock, type ExplainSource, type Explanation } from './rules/explain';
import { explainFromCfs, explainMissing } from './rules/explain-cfs';
import { retryingSentence, withRetryingCall } from './rules/explain-retrying';
import { idRejection } from './explain-id';

export interface ExplainReply {
  status: number;
  body: Explanation | { id?: string; error: string; reason: string };
  /** Seconds, for a Retry-After header. */
  retryAfterS?: number;
}

export interface ExplainDeps {
  state: ExplainSource;
  clock: Clock;
  /** One GET of the component (config and state details); rejects with a CfsError. */
  getComponent: (id: string, signal: AbortSignal) => Promise<CfsComponent>;
  /** CFS lookups in flight at most (BATCHER_EXPLAIN_LOOKUPS). */
  maxLookups: number;
}

export interface Explainer {
  explain(id: string, signal: AbortSignal): Promise<ExplainReply>;
  /** CFS lookups in flight now. */
  lookupsInFlight(): number;
}

/** Seconds a client is asked to wait when every lookup slot is taken, or CFS did not answer. */
const BUSY_RETRY_AFTER_S = 1;
const CFS_RETRY_AFTER_S = 5;

export function createExplainer(d: ExplainDeps): Explainer {
  let inFlight = 0;
  const frame = (): ExplainClock => ({ now: d.clock.now(), offset: wallOffset(d.clock) });
  const known = (a: Explanation): ExplainReply => ({
    status: a.state === 'unknown' ? 404 : 200,
    body: withRetryingCall(a, d.state, frame()),
  });

  async function lookUp(id: string, signal: AbortSignal): Promise<ExplainReply> {
    inFlight += 1;
    try {
      const raw = await d.getComponent(id, signal);
      // The loop may have filed it meanwhile: its memory is the fresher answer.
      return known(explainFromMemory(d.state, id, frame()) ?? explainFromCfs(d.state, id, raw, frame()));
    } catch (err) {
      if (isCfsError(err) && err.isNotFound)
        return known(explainFromMemory(d.state, id, frame()) ?? explainMissing(id, frame()));
      if (!isCfsError(err)) throw err;
      const how = err.kind === 'http' ? `answered ${err.status ?? '?'}` : `failed (${err.kind})`;
      return {
        status: 503,
        retryAfterS: CFS_RETRY_AFTER_S,
        body: {
          id,
          error: 'cfs_unavailable',
          reason: [
            `The batcher does not hold this component and its CFS lookup ${how}; try again shortly.`,
            retryingSentence(d.state, frame()),
          ]
            .filter((x) => x !== null)
            .join(' '),
        },
      };
    } finally {
      inFlight -= 1;
    }
  }

  return {
    lookupsInFlight: () => inFlight,
    explain(id, signal) {
      const bad = idRejection(id);
      if (bad !== null) return Promise.resolve({ status: 400, body: { error: 'invalid_id', reason: bad } });
      const fromMemory = explainFromMemory(d.state, id, frame());
      if (fromMemory !== null) return Promise.resolve(known(fromMemory));
      if (inFlight >= d.maxLookups)
        return Promise.resolve({
          status: 503,
          retryAfterS: BUSY_RETRY_AFTER_S,
          body: {
            id,
            error: 'busy',
            reason: `The batcher does not hold this component and ${d.maxLookups} CFS lookups are already in flight; try again in ${BUSY_RETRY_AFTER_S} s.`,
          },
        });
      return lookUp(id, signal);
    },
  };
}

/**
 * The CFS client of the explain lookups: the batcher's CFS settings (URL, CA, token, timeouts) with no retries (one
 * call per request), its requests counted in the batcher's CFS request metrics, and nothing else: no heartbeat
 * progress.
 */
export function explainLookupClient(cfs: CfsClientOptions, metrics: BatcherMetrics): CfsClient {
  // the answer itself says how a lookup failed: no log line per lookup
  return new CfsClient({ ...cfs, retryBudgetMs: 0, logFailures: false, onRequest: (r) => metrics.observeRequest(r) });
}

/** The production lookup: one GET with the details the explain rules read. */
export function componentLookup(client: CfsClient): ExplainDeps['getComponent'] {
  return (id, signal) => client.getComponent(id, { config_details: true, state_details: true }, { signal });
}
