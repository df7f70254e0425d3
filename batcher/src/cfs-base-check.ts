/**
 * One look at CFS_API_URL as the loop starts (beside it, so a hanging CFS delays nothing): a base without `/v3` (e.g. `.../apis/cfs`) answers 404 to every
 * call, and the loop would wait for CFS forever with nothing but 404 lines to go on.
 *
 * Fatal only when proven: the base answers 404 for GET /options while the same base plus `/v3` answers it with
 * the options. That takes a CFS that is up, so an outage can never make the batcher crash-loop; no restart can fix
 * such a URL. Any other 404 (also possible on a correct base, from a gateway while CFS is being redeployed) is one
 * ERROR line naming the variable and the likely fix, and the loop goes on waiting for CFS as usual; liveness is
 * not affected either way.
 */
import { CfsClient, ConfigError, isCfsError, type CfsClientOptions, type Logger } from '@cfs-batcher/shared';

/** What one GET /options at a base got: the options, a 404, or anything else (no answer, 401, 5xx, a bad body). */
export type OptionsProbe = 'options' | 'not-found' | 'other';

export interface BaseFinding {
  level: 'fatal' | 'error' | 'warn';
  line: string;
}

const CSM_BASES = 'http://cray-cfs-api/v3 in the cluster, https://api-gw-service-nmn.local/apis/cfs/v3 via the gateway';

const endsInV3 = (base: string): boolean => /\/v3$/.test(new URL(base).pathname.replace(/\/+$/, ''));

/** The base with `/v3` appended, as the likely fix of a base without it. */
export function withV3(base: string): string {
  return `${base.replace(/\/+$/, '')}/v3`;
}

/** Pure: what to say about `base` given the probe there and, for a base without /v3, the probe at base + /v3. */
export function judgeCfsBase(base: string, atBase: OptionsProbe, atV3?: OptionsProbe): BaseFinding | null {
  const v3 = endsInV3(base);
  const setting = `CFS_API_URL=${base}`;
  if (atBase === 'options') return null;
  if (atBase === 'other') {
    if (v3) return null; // the loop reports CFS trouble itself
    return {
      level: 'warn',
      line: `${setting} does not end in /v3 and CFS gave no usable answer to GET /options, so it could not be checked; if CFS answers 404 later, set CFS_API_URL=${withV3(base)}`,
    };
  }
  if (!v3 && atV3 === 'options') {
    return {
      level: 'fatal',
      line: `${setting} answers 404 for GET /options while ${withV3(base)} answers it: did you mean CFS_API_URL=${withV3(base)}?`,
    };
  }
  const fix = v3 ? `is it the CFS v3 API (${CSM_BASES})?` : `did you mean ${withV3(base)}?`;
  return {
    level: 'error',
    line: `${setting} answers 404 for GET /options; ${fix} The batcher keeps trying, as for any CFS trouble: a gateway also answers 404 while CFS is being redeployed`,
  };
}

async function probeOptions(opts: CfsClientOptions, baseUrl: string, signal: AbortSignal): Promise<OptionsProbe> {
  // one attempt: this is a look, not a wait; the loop does the waiting (opts.onRequest still counts it)
  const client = new CfsClient({ ...opts, baseUrl, retryBudgetMs: 0 });
  try {
    await client.getOptions({ signal });
    return 'options';
  } catch (err) {
    return isCfsError(err) && err.kind === 'http' && err.status === 404 ? 'not-found' : 'other';
  }
}

/** Probes the configured base (and base + /v3 after a 404); logs the finding, throws a ConfigError when proven wrong. */
export async function checkCfsBase(opts: CfsClientOptions, log: Logger, signal: AbortSignal): Promise<void> {
  const base = opts.baseUrl;
  const atBase = await probeOptions(opts, base, signal);
  const atV3 = atBase === 'not-found' && !endsInV3(base) ? await probeOptions(opts, withV3(base), signal) : undefined;
  if (signal.aborted) return;
  const finding = judgeCfsBase(base, atBase, atV3);
  if (!finding) return;
  if (finding.level === 'fatal') throw new ConfigError(finding.line);
  if (finding.level === 'error') log.error(finding.line, { setting: 'CFS_API_URL' });
  else log.warn(finding.line, { setting: 'CFS_API_URL' });
}
