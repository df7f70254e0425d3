/**
 * Sidecar settings from the environment. Every value has a documented default (README.md, docs/CONTRACTS.md);
 * a bad value is a ConfigError at start-up that names the variable.
 */
import {
  CFS_OPTION_DEFAULTS,
  ConfigError,
  DEFAULT_HEARTBEAT_PATH,
  HEARTBEAT_PHASES,
  WAIT_PHASES,
  cfsClientOptionsFromEnv,
  envInt,
  envLogLevel,
  envString,
  refuseUnknownSettings,
  settingNames,
  type CfsClientOptions,
  type CfsLogLevel,
  type Phase,
  type SettingsScope,
} from '@cfs-batcher/shared';

export interface Thresholds {
  /** Time a starting sidecar, or a new batcher instance, is given before missing/stale heartbeats fail liveness. */
  startupGraceMs: number;
  /** Longest silence allowed in any phase (the batcher beats at least once a second); null = interval + cycleBudgetMs. */
  freshnessMs: number | null;
  /** Added to the live batcher_check_interval when freshnessMs is null (a batcher that sleeps without beating). */
  cycleBudgetMs: number;
  /** Added to 2 x the live check interval: how long a batcher claiming CFS trouble may go without trying CFS. */
  tryingMarginMs: number;
  /** A working phase past its budget is not stuck while its last CFS answer is at most this old. */
  cfsAnswerAllowanceMs: number;
  /** Longest time the batcher may stay in one working phase. Phases without an entry use defaultPhaseBudgetMs. */
  phaseBudgetsMs: Partial<Record<Phase, number>>;
  defaultPhaseBudgetMs: number;
  /** Fixed progress deadline; null = batch_window + progressIntervals x batcher_check_interval. */
  progressDeadlineMs: number | null;
  progressIntervals: number;
  /** Used until the first heartbeat says what the live option is (the CFS default). */
  defaultCheckIntervalS: number;
  /** A CFS observation older than this is treated as unknown. */
  cfsStaleMs: number;
}

export interface SidecarConfig {
  logLevel: CfsLogLevel;
  heartbeatPath: string;
  port: number;
  host: string;
  evalIntervalMs: number;
  /** 0 disables the sidecar's own CFS queries (and with them the progress rule). */
  cfsPollMs: number;
  cfsTimeoutMs: number;
  cfs: CfsClientOptions;
  thresholds: Thresholds;
}

/** Phases whose time is bounded by something else: sleep by the freshness limit, waits not at all. */
const UNBUDGETED: ReadonlySet<Phase> = new Set<Phase>(['sleep', ...WAIT_PHASES]);

export const DEFAULT_PHASE_BUDGETS =
  'starting=60,rebuild=300,options=60,check_status=120,collect=180,send=120,stopping=60';

/** Pure: "rebuild=300,options=60" -> { rebuild: 300000, options: 60000 }. */
export function parsePhaseBudgets(text: string, name = 'SIDECAR_PHASE_BUDGETS'): Partial<Record<Phase, number>> {
  const out: Partial<Record<Phase, number>> = {};
  const setting = `${name}=${JSON.stringify(text)}`; // the Configuration error line names the variable and value
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const m = /^([a-z_]+)\s*=\s*(\d+)$/.exec(item);
    if (!m) throw new ConfigError(`${setting}: "${item}" is not phase=seconds`);
    const phase = m[1] as Phase;
    if (!(HEARTBEAT_PHASES as readonly string[]).includes(phase)) {
      throw new ConfigError(`${setting}: unknown phase "${m[1]}" (phases: ${HEARTBEAT_PHASES.join(', ')})`);
    }
    if (UNBUDGETED.has(phase)) {
      throw new ConfigError(
        `${setting}: phase "${phase}" takes no budget (sleep is bounded by the freshness limit, waits are exempt)`,
      );
    }
    const seconds = Number(m[2]);
    if (seconds < 1) throw new ConfigError(`${setting}: budget for ${phase} must be at least 1 s`);
    out[phase] = seconds * 1000;
  }
  return out;
}

export function thresholdsFromEnv(env: NodeJS.ProcessEnv = process.env): Thresholds {
  const cfsPollS = envInt(env, 'SIDECAR_CFS_POLL_SECONDS', 10, 0, 3600);
  const deadlineS = envInt(env, 'SIDECAR_PROGRESS_DEADLINE_SECONDS', 0, 0, 7 * 86400);
  // 14 s: above the worst beat gap measured (11.2 s: a CFS call hanging into the 10 s client timeout) with margin,
  // and inside the 30 s hang-to-SIGKILL target (docs/deployment.md); 0 = the older interval rule.
  const freshS = envInt(env, 'SIDECAR_FRESHNESS_SECONDS', 14, 0, 86400);
  return {
    startupGraceMs: envInt(env, 'SIDECAR_STARTUP_GRACE_SECONDS', 60, 0, 86400) * 1000,
    freshnessMs: freshS > 0 ? freshS * 1000 : null,
    cycleBudgetMs: envInt(env, 'SIDECAR_CYCLE_BUDGET_SECONDS', 30, 1, 86400) * 1000,
    tryingMarginMs: envInt(env, 'SIDECAR_TRYING_MARGIN_SECONDS', 5, 0, 3600) * 1000,
    // 10 s request timeout + 30 s retry budget: every CFS call ends with an answer (or a timeout) well within 60 s.
    cfsAnswerAllowanceMs: envInt(env, 'SIDECAR_PHASE_ANSWER_SECONDS', 60, 1, 86400) * 1000,
    phaseBudgetsMs: {
      ...parsePhaseBudgets(DEFAULT_PHASE_BUDGETS),
      ...parsePhaseBudgets(envString(env, 'SIDECAR_PHASE_BUDGETS', '')),
    },
    defaultPhaseBudgetMs: 120_000,
    progressDeadlineMs: deadlineS > 0 ? deadlineS * 1000 : null,
    progressIntervals: envInt(env, 'SIDECAR_PROGRESS_INTERVALS', 6, 1, 1000),
    defaultCheckIntervalS: CFS_OPTION_DEFAULTS.batcher_check_interval,
    // Three missed polls: one slow answer must not switch the progress rule off and on.
    cfsStaleMs: Math.max(3 * cfsPollS * 1000, 5000),
  };
}

/** Every setting from `env`, each declaration with its default (read unconditionally: `settingNames` relies on it). */
function readConfig(env: NodeJS.ProcessEnv): SidecarConfig {
  return {
    logLevel: envLogLevel(env, 'LOG_LEVEL', 'INFO'),
    heartbeatPath: envString(env, 'HEARTBEAT_PATH', DEFAULT_HEARTBEAT_PATH),
    port: envInt(env, 'HEALTH_PORT', 8081, 0, 65535),
    host: envString(env, 'HEALTH_HOST', '0.0.0.0'),
    evalIntervalMs: envInt(env, 'SIDECAR_EVAL_INTERVAL_MS', 1000, 50, 60_000),
    cfsPollMs: envInt(env, 'SIDECAR_CFS_POLL_SECONDS', 10, 0, 3600) * 1000,
    cfsTimeoutMs: envInt(env, 'SIDECAR_CFS_TIMEOUT_MS', 3000, 100, 60_000),
    cfs: cfsClientOptionsFromEnv(env),
    thresholds: thresholdsFromEnv(env),
  };
}

/** The sidecar's variables: the names its declarations read; a CFS_, SIDECAR_ or HEALTH_ one outside them is refused. */
export const SIDECAR_SETTINGS: SettingsScope = Object.freeze({
  program: 'sidecar',
  prefixes: ['CFS_', 'SIDECAR_', 'HEALTH_'],
  known: settingNames(readConfig),
});

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SidecarConfig {
  refuseUnknownSettings(env, SIDECAR_SETTINGS);
  return readConfig(env);
}
