/**
 * The batcher's CFS options: pure parsing and validation of the raw GET /v3/options answer.
 *
 * Each option is checked on its own against the spec (type and minimum). A bad value never stops the batcher: it is
 * reported as a problem and the last good value (or the default) stays in force.
 */
import { CFS_OPTION_DEFAULTS, type CfsLogLevel } from '@cfs-batcher/shared';

export interface BatcherOptions {
  batcher_check_interval: number;
  batch_size: number;
  batch_window: number;
  default_batcher_retry_policy: number;
  batcher_max_backoff: number;
  batcher_disable: boolean;
  batcher_pending_timeout: number;
  logging_level: CfsLogLevel;
}

export type OptionName = keyof BatcherOptions;

/** The batcher's defaults (the contract's, in shared); the ones CFS lacks are written back once so the server uses the same values. */
export const DEFAULT_OPTIONS: Readonly<BatcherOptions> = CFS_OPTION_DEFAULTS;

export const OPTION_NAMES = Object.keys(DEFAULT_OPTIONS) as OptionName[];

type Check = (value: unknown) => { ok: true; value: unknown } | { ok: false; why: string };

function intAtLeast(min: number): Check {
  return (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min
      ? { ok: true, value: v }
      : {
          ok: false,
          why: typeof v === 'number' && Number.isSafeInteger(v) ? `must be >= ${min}` : 'must be an integer',
        };
}

const isBool: Check = (v) =>
  typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, why: 'must be a boolean' };

const isLevel: Check = (v) => {
  const up = typeof v === 'string' ? v.toUpperCase() : undefined;
  return up === 'DEBUG' || up === 'INFO' || up === 'WARNING' || up === 'ERROR'
    ? { ok: true, value: up }
    : { ok: false, why: 'must be one of DEBUG, INFO, WARNING, ERROR' };
};

/** Ranges from the CFS OpenAPI V3Options schema. */
const CHECKS: Record<OptionName, Check> = {
  batcher_check_interval: intAtLeast(1),
  batch_size: intAtLeast(1),
  batch_window: intAtLeast(0),
  default_batcher_retry_policy: intAtLeast(0),
  batcher_max_backoff: intAtLeast(0),
  batcher_disable: isBool,
  batcher_pending_timeout: intAtLeast(1),
  logging_level: isLevel,
};

export interface OptionProblem {
  option: OptionName;
  value: unknown;
  message: string;
}

export interface ParsedOptions {
  options: BatcherOptions;
  problems: OptionProblem[];
  /** Options CFS does not hold at all (to be PATCHed with the default). */
  missing: Partial<BatcherOptions>;
}

/**
 * Pure: raw options (anything) + the options last in force -> the options to use now.
 * A non-object answer keeps everything as it was and is itself a problem.
 */
export function parseOptions(raw: unknown, previous: BatcherOptions = DEFAULT_OPTIONS): ParsedOptions {
  const options: BatcherOptions = { ...previous };
  const problems: OptionProblem[] = [];
  const missing: Partial<BatcherOptions> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      options,
      problems: [
        {
          option: 'batcher_check_interval',
          value: raw,
          message: 'options answer is not an object; keeping the options in force',
        },
      ],
      missing,
    };
  }
  const record = raw as Record<string, unknown>;
  for (const name of OPTION_NAMES) {
    if (!(name in record) || record[name] === undefined) {
      (missing as Record<string, unknown>)[name] = DEFAULT_OPTIONS[name];
      (options as unknown as Record<string, unknown>)[name] = DEFAULT_OPTIONS[name];
      continue;
    }
    const result = CHECKS[name](record[name]);
    if (result.ok) {
      (options as unknown as Record<string, unknown>)[name] = result.value;
    } else {
      problems.push({
        option: name,
        value: record[name],
        message: `Invalid value ${JSON.stringify(record[name])} for option ${name}: ${result.why}; using ${JSON.stringify(options[name])}`,
      });
    }
  }
  return { options, problems, missing };
}

/**
 * Options the real CFS fills in with its defaults on every read: an answer lacking any of them is not what a real
 * CFS returns (a proxy's `{}`, a half-written answer), so nothing is written back from it.
 */
export const SERVER_OWN_OPTIONS = [
  'default_playbook',
  'default_ansible_config',
  'default_page_size',
  'include_ara_links',
] as const;

/** What earlier answers said (per instance): batcher options seen present, and those missing in the last answer. */
export interface OptionsMemory {
  seen: Set<OptionName>;
  missingBefore: Set<OptionName>;
}

export function newOptionsMemory(): OptionsMemory {
  return { seen: new Set(), missingBefore: new Set() };
}

export interface OptionsPlan extends Omit<ParsedOptions, 'missing'> {
  /** Defaults to write back: options CFS does not hold, judged from answers that can be trusted. */
  patch: Partial<BatcherOptions>;
  /** Why a missing option is not written back (one per reason; warned once). */
  held: string[];
}

/**
 * Pure: the answer, the options in force and the memory -> what to use and what to PATCH. A missing option keeps
 * its last good value and is written back only when (1) the answer carries the server's own options, (2) this
 * instance never saw the option present, and (3) the previous answer lacked it too: one odd answer can never turn a
 * site's batch_window 10 into the default 60. On a fresh CFS the defaults are written on the second cycle.
 */
export function planOptions(raw: unknown, previous: BatcherOptions, memory: OptionsMemory): OptionsPlan {
  const parsed = parseOptions(raw, previous);
  const options = parsed.options;
  const missing = Object.keys(parsed.missing) as OptionName[];
  const record = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const trusted = SERVER_OWN_OPTIONS.every((k) => k in record);
  const patch: Partial<BatcherOptions> = {};
  const held: string[] = [];
  for (const name of OPTION_NAMES) if (!missing.includes(name) && name in record) memory.seen.add(name);
  if (!trusted && missing.length > 0)
    held.push(`options answer lacks the server's own options; keeping the options in force and writing nothing back`);
  for (const name of missing) {
    (options as unknown as Record<string, unknown>)[name] = previous[name];
    if (!trusted) continue;
    if (memory.seen.has(name))
      held.push(
        `option ${name} is missing from an options answer that had it before; keeping ${JSON.stringify(previous[name])}`,
      );
    else if (memory.missingBefore.has(name)) (patch as Record<string, unknown>)[name] = DEFAULT_OPTIONS[name];
  }
  memory.missingBefore = new Set(trusted ? missing : []);
  return { options, problems: parsed.problems, patch, held };
}
