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
 *
 * An answer that names layers names them as the configuration does (`slingshot`, not only `layer 2`): the layer
 * names of a configuration are read from CFS once (`GET /v3/configurations/{name}`, in a lookup slot) and kept for
 * LAYER_NAMES_TTL_MS; without a free slot, or when CFS does not answer, the answer gives the indices alone.
 */
import {
  CfsClient,
  isCfsError,
  type CfsClientOptions,
  type CfsComponent,
  type CfsConfiguration,
} from '@cfs-batcher/shared';
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
  /** CFS lookups in flight at most (EXPLAIN_LOOKUPS). */
  maxLookups: number;
  /** One GET of a configuration, for its layer names; without it answers name layers by index only. */
  getConfiguration?: (name: string, signal: AbortSignal) => Promise<CfsConfiguration>;
  /** The batcher's CFS base URL, for the request an answer tells the operator to make. */
  cfsBaseUrl?: string;
}

export interface Explainer {
  explain(id: string, signal: AbortSignal): Promise<ExplainReply>;
  /** CFS lookups in flight now. */
  lookupsInFlight(): number;
}

/** Seconds a client is asked to wait when every lookup slot is taken, or CFS did not answer. */
const BUSY_RETRY_AFTER_S = 1;
const CFS_RETRY_AFTER_S = 5;
/** How long a configuration's layer names are used before CFS is asked again (a configuration rarely changes). */
export const LAYER_NAMES_TTL_MS = 60_000;

/** The configuration an answer is about, whose layer names it would use. */
function configurationOf(a: Explanation): string | null {
  const batch = a.batch as { configuration?: unknown } | undefined;
  const cfs = a.cfs as { desired_config?: unknown } | undefined;
  const name = batch?.configuration ?? cfs?.desired_config;
  return typeof name === 'string' && name !== '' ? name : null;
}

export function createExplainer(d: ExplainDeps): Explainer {
  let inFlight = 0;
  const layerNames = new Map<string, { names: readonly string[]; at: number }>();
  const frame = (): ExplainClock => ({
    now: d.clock.now(),
    offset: wallOffset(d.clock),
    layerNames: (config) => layerNames.get(config)?.names,
    ...(d.cfsBaseUrl !== undefined ? { cfsBaseUrl: d.cfsBaseUrl } : {}),
  });
  const known = (a: Explanation): ExplainReply => ({
    status: a.state === 'unknown' ? 404 : 200,
    body: withRetryingCall(a, d.state, frame()),
  });

  /** The answer `make` gives, with its configuration's layer names read first when they are not at hand. */
  async function named(make: () => Explanation, signal: AbortSignal): Promise<Explanation> {
    const first = make();
    const config = configurationOf(first);
    const cached = config === null ? undefined : layerNames.get(config);
    const fresh = cached !== undefined && d.clock.now() - cached.at < LAYER_NAMES_TTL_MS;
    if (config === null || fresh || !d.getConfiguration || inFlight >= d.maxLookups) return first;
    inFlight += 1;
    try {
      const conf = await d.getConfiguration(config, signal);
      const names = (conf.layers ?? []).map((l) => (typeof l.name === 'string' ? l.name : ''));
      layerNames.set(config, { names, at: d.clock.now() });
    } catch (err) {
      if (!isCfsError(err)) throw err;
      // the indices alone then; a missing configuration has no names to give
      if (err.isNotFound) layerNames.set(config, { names: [], at: d.clock.now() });
      return first;
    } finally {
      inFlight -= 1;
    }
    return make();
  }

  async function lookUp(id: string, signal: AbortSignal): Promise<ExplainReply> {
    inFlight += 1;
    let counted = true;
    try {
      const raw = await d.getComponent(id, signal);
      inFlight -= 1;
      counted = false;
      // The loop may have filed it meanwhile: its memory is the fresher answer.
      return known(
        await named(() => explainFromMemory(d.state, id, frame()) ?? explainFromCfs(d.state, id, raw, frame()), signal),
      );
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
      if (counted) inFlight -= 1;
    }
  }

  return {
    lookupsInFlight: () => inFlight,
    explain(id, signal) {
      const bad = idRejection(id);
      if (bad !== null) return Promise.resolve({ status: 400, body: { error: 'invalid_id', reason: bad } });
      const fromMemory = explainFromMemory(d.state, id, frame());
      if (fromMemory !== null)
        return named(() => explainFromMemory(d.state, id, frame()) ?? fromMemory, signal).then(known);
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

/** The production configuration read, for the layer names. */
export function configurationLookup(client: CfsClient): NonNullable<ExplainDeps['getConfiguration']> {
  return (name, signal) => client.getConfiguration(name, { signal });
}
