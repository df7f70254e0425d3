/**
 * A look at CFS_API_URL beside a program's own work (so a hanging CFS delays nothing), the same for the batcher and
 * the sidecar: a base without `/v3` (e.g. `.../apis/cfs`) answers 404 to every call, which the batcher would wait on
 * for ever and the sidecar would report as CFS being unreachable.
 *
 * Fatal only when proven: the base answers 404 for GET /options while the same base plus `/v3` answers it with the
 * options. That takes a CFS that is up, so an outage can never make a program crash-loop; no restart can fix such a
 * URL. A CFS that gives no usable answer at start leaves a base without `/v3` unchecked: it is checked again when one
 * of the program's own calls first gets an HTTP answer. Any other 404 (also possible on a correct base, from a gateway
 * while CFS is being redeployed) is one ERROR line naming the variable and the likely fix, and the program goes on.
 */
import { ConfigError } from '../settings';
import type { Logger } from '../logger';
import { CfsClient } from './client';
import type { CfsClientOptions } from './client-options';
import { isCfsError } from './errors';
import type { RequestInfo } from './transport';

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

/** Pure: what to say about `base` given the probe there and, for a base without /v3, the probe at base + /v3.
 * `program` names who keeps trying ("The batcher", "The health sidecar"). */
export function judgeCfsBase(
  base: string,
  atBase: OptionsProbe,
  atV3?: OptionsProbe,
  program = 'The batcher',
): BaseFinding | null {
  const v3 = endsInV3(base);
  const setting = `CFS_API_URL=${base}`;
  if (atBase === 'options') return null;
  if (atBase === 'other') {
    if (v3) return null; // the program reports CFS trouble itself
    return {
      level: 'warn',
      line: `${setting} does not end in /v3 and CFS gave no usable answer to GET /options, so it could not be checked; it is checked again when CFS first answers (if CFS answers 404, set CFS_API_URL=${withV3(base)})`,
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
    line: `${setting} answers 404 for GET /options; ${fix} ${program} keeps trying, as for any CFS trouble: a gateway also answers 404 while CFS is being redeployed`,
  };
}

/** Resolves a waiter at the next answer from CFS itself that any of the program's CFS calls gets (fed from its
 * `onRequest`): a status below 500. A 5xx (often a gateway while CFS is away) could not tell a base either way. */
export class CfsAnswers {
  private waiters: (() => void)[] = [];

  /** The program's request hook: an attempt that got a status line is an answer. */
  saw(r: RequestInfo): void {
    if (!/^[1-4]\d\d$/.test(r.status) || this.waiters.length === 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  /** The next answer after this call, or the abort of `signal`. */
  next(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
  }
}

async function probeOptions(opts: CfsClientOptions, baseUrl: string, signal: AbortSignal): Promise<OptionsProbe> {
  // one attempt: this is a look, not a wait; the program does the waiting (opts.onRequest still counts it), and the
  // finding is the one line said about it
  const client = new CfsClient({ ...opts, baseUrl, retryBudgetMs: 0, logFailures: false });
  try {
    await client.getOptions({ signal });
    return 'options';
  } catch (err) {
    return isCfsError(err) && err.kind === 'http' && err.status === 404 ? 'not-found' : 'other';
  }
}

export interface BaseCheck {
  /** Who keeps trying, in the finding's line ("The batcher"). */
  program: string;
  /** Resolves at the program's next CFS answer (CfsAnswers.next); without it an unusable answer is not re-checked. */
  nextAnswer?: (signal: AbortSignal) => Promise<void>;
}

/**
 * Probes the configured base (and base + /v3 after a 404); logs the finding, throws a ConfigError when proven wrong.
 * A base without /v3 that could not be checked is checked again at the program's next CFS answer, until it can be.
 */
export async function checkCfsBase(
  opts: CfsClientOptions,
  log: Logger,
  signal: AbortSignal,
  how: BaseCheck = { program: 'The batcher' },
): Promise<void> {
  const base = opts.baseUrl;
  for (let first = true; !signal.aborted; first = false) {
    const atBase = await probeOptions(opts, base, signal);
    const atV3 = atBase === 'not-found' && !endsInV3(base) ? await probeOptions(opts, withV3(base), signal) : undefined;
    if (signal.aborted) return;
    const finding = judgeCfsBase(base, atBase, atV3, how.program);
    if (finding?.level === 'warn' && how.nextAnswer) {
      if (first) log.warn(finding.line, { setting: 'CFS_API_URL' });
      await how.nextAnswer(signal);
      continue;
    }
    if (!finding) return;
    if (finding.level === 'fatal') throw new ConfigError(finding.line);
    if (finding.level === 'error') log.error(finding.line, { setting: 'CFS_API_URL' });
    else log.warn(finding.line, { setting: 'CFS_API_URL' });
    return;
  }
}
