/**
 * The sidecar's settings, declared once in one zod schema (`SIDECAR_SETTINGS`: name, default, meaning, why a site
 * changes it; docs/CONTRACTS.md lists them). The other thresholds are named constants here, each with the reason
 * for its value; tests that need other values build their own `Thresholds`. A bad or unknown variable is a
 * ConfigError at start-up that names it.
 */
import {
  CFS_CONNECTION_SETTINGS,
  CFS_OPTION_DEFAULTS,
  ConfigError,
  DEFAULT_HEARTBEAT_PATH,
  HEARTBEAT_PHASES,
  WAIT_PHASES,
  defineSettings,
  intSetting,
  logLevelSetting,
  parsedSetting,
  refuseUnknownSettings,
  scopeOf,
  textSetting,
  type CfsClientOptions,
  type CfsLogLevel,
  type Phase,
} from '@cfs-batcher/shared';

export interface Thresholds {
  /** Time a starting sidecar, or a new batcher instance, is given before missing/stale heartbeats fail liveness. */
  startupGraceMs: number;
  /** Longest silence allowed in any phase (the batcher beats at least once a second). */
  freshnessMs: number;
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

/** How often the cached verdict is refreshed: a tenth of the 10 s between a hang and the first failed probe. */
export const EVAL_INTERVAL_MS = 1000;
/** Per-request timeout of the sidecar's own CFS round (no retries): a cheap read answers in milliseconds. */
export const CFS_ROUND_TIMEOUT_MS = 3000;

/** Phases whose time is bounded by something else: sleep by the freshness limit, waits not at all. */
const UNBUDGETED: ReadonlySet<Phase> = new Set<Phase>(['sleep', ...WAIT_PHASES]);

/** Check intervals added to batch_window for the computed progress deadline. */
export const PROGRESS_INTERVALS = 6;

export const DEFAULT_PHASE_BUDGETS =
  'starting=60,rebuild=300,options=60,check_status=120,collect=180,send=120,stopping=60';

/** Pure: "rebuild=300,options=60" -> { rebuild: 300000, options: 60000 }. */
export function parsePhaseBudgets(text: string): Partial<Record<Phase, number>> {
  const out: Partial<Record<Phase, number>> = {};
  const setting = ''; // the settings reader puts the variable and its value before the message
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

/** Every setting of the sidecar: the CFS connection, where it reads and serves, and the limits a site may move. */
export const SIDECAR_SETTINGS = defineSettings({
  program: 'sidecar',
  prefixes: ['CFS_', 'SIDECAR_', 'HEALTH_'],
  settings: {
    ...CFS_CONNECTION_SETTINGS,
    HEARTBEAT_PATH: {
      schema: textSetting(),
      default: DEFAULT_HEARTBEAT_PATH,
      meaning: "the batcher's heartbeat file on the shared volume",
      reason: "the volume is mounted elsewhere (the batcher's HEARTBEAT_PATH)",
    },
    HEALTH_PORT: {
      schema: intSetting(0, 65535),
      default: '8081',
      meaning: 'port of /livez, /startupz, /healthz, /readyz, /status and /metrics',
      reason: "the port is taken in the pod (the probes' port must follow)",
    },
    HEALTH_HOST: {
      schema: textSetting(),
      default: '0.0.0.0',
      meaning: 'listen address',
      reason: 'an IPv6-only cluster (::); the local pod and the tests listen on 127.0.0.1',
    },
    LOG_LEVEL: {
      schema: logLevelSetting(),
      default: 'INFO',
      meaning: 'DEBUG, INFO, WARNING or ERROR (any case; WARN and CRITICAL also accepted)',
      reason: 'DEBUG while diagnosing a verdict',
    },
    SIDECAR_FRESHNESS_SECONDS: {
      // 14 s: above the worst beat gap measured (11.2 s: a CFS call hanging into the 10 s client timeout) with
      // margin, and inside the 30 s hang-to-SIGKILL target (docs/deployment.md)
      schema: intSetting(1, 86400),
      default: '14',
      meaning: 'longest silence of the heartbeat in any phase, on the sidecar monotonic clock',
      reason: 'a batcher whose CFS_REQUEST_TIMEOUT_MS is raised above 10 s beats less often; keep this above it',
    },
    SIDECAR_STARTUP_GRACE_SECONDS: {
      schema: intSetting(0, 86400),
      default: '60',
      meaning: 'grace after the sidecar starts or a new batcher instance appears, until it is seen advancing',
      reason: 'nodes slow to start a container (the startupProbe budget, 90 s, must stay above it)',
    },
    SIDECAR_PHASE_BUDGETS: {
      schema: parsedSetting((text) => parsePhaseBudgets(text)),
      default: '',
      meaning: `longest time in one working phase, phase=seconds (entries override ${DEFAULT_PHASE_BUDGETS})`,
      reason: 'a large site whose rebuild or collect takes longer than the defaults',
    },
    SIDECAR_PROGRESS_DEADLINE_SECONDS: {
      schema: intSetting(0, 7 * 86400),
      default: '0',
      meaning: `pending work with no batcher session for longer fails /livez; 0 = batch_window + ${PROGRESS_INTERVALS} x batcher_check_interval`,
      reason: 'an operator that leaves sessions pending longer than the computed deadline',
    },
    SIDECAR_CFS_POLL_SECONDS: {
      schema: intSetting(0, 3600),
      default: '10',
      meaning: "period of the sidecar's own cheap CFS round (0 disables it and the progress rule)",
      reason: 'a site that gives the sidecar no CFS access (no token), or wants fewer requests',
    },
  },
  retired: {
    CFS_CONNECT_TIMEOUT_MS: `the sidecar's CFS round uses ${CFS_ROUND_TIMEOUT_MS} ms`,
    CFS_REQUEST_TIMEOUT_MS: `the sidecar's CFS round uses ${CFS_ROUND_TIMEOUT_MS} ms`,
    CFS_RETRY_BUDGET_MS: "the sidecar's CFS round never retries",
    SIDECAR_CFS_TIMEOUT_MS: `a constant, ${CFS_ROUND_TIMEOUT_MS} ms`,
    SIDECAR_EVAL_INTERVAL_MS: `a constant, ${EVAL_INTERVAL_MS} ms`,
    SIDECAR_CYCLE_BUDGET_SECONDS: 'the freshness limit is SIDECAR_FRESHNESS_SECONDS alone',
    SIDECAR_TRYING_MARGIN_SECONDS: 'a constant, 5 s',
    SIDECAR_PHASE_ANSWER_SECONDS: 'a constant, 60 s',
    SIDECAR_PROGRESS_INTERVALS: `a constant, ${PROGRESS_INTERVALS}; set SIDECAR_PROGRESS_DEADLINE_SECONDS instead`,
  },
});

type SidecarValues = ReturnType<typeof SIDECAR_SETTINGS.parse>;

/** The thresholds: the settings' values and the constants, each constant with the reason for its value. */
function thresholdsOf(s: SidecarValues): Thresholds {
  return {
    startupGraceMs: s.SIDECAR_STARTUP_GRACE_SECONDS * 1000,
    freshnessMs: s.SIDECAR_FRESHNESS_SECONDS * 1000,
    // a batcher claiming CFS trouble tries at least every check interval; 5 s covers one slow attempt
    tryingMarginMs: 5000,
    // 10 s request timeout + 30 s retry budget: every CFS call ends with an answer (or a timeout) well within 60 s.
    cfsAnswerAllowanceMs: 60_000,
    phaseBudgetsMs: { ...parsePhaseBudgets(DEFAULT_PHASE_BUDGETS), ...s.SIDECAR_PHASE_BUDGETS },
    defaultPhaseBudgetMs: 120_000,
    progressDeadlineMs: s.SIDECAR_PROGRESS_DEADLINE_SECONDS > 0 ? s.SIDECAR_PROGRESS_DEADLINE_SECONDS * 1000 : null,
    progressIntervals: PROGRESS_INTERVALS,
    defaultCheckIntervalS: CFS_OPTION_DEFAULTS.batcher_check_interval,
    // Three missed polls: one slow answer must not switch the progress rule off and on.
    cfsStaleMs: Math.max(3 * s.SIDECAR_CFS_POLL_SECONDS * 1000, 5000),
  };
}

/** The thresholds from `env`'s settings (no unknown-variable check: tests build variants from it). */
export function thresholdsFromEnv(env: NodeJS.ProcessEnv = process.env): Thresholds {
  return thresholdsOf(SIDECAR_SETTINGS.parse(env));
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SidecarConfig {
  refuseUnknownSettings(env, scopeOf(SIDECAR_SETTINGS));
  const s = SIDECAR_SETTINGS.parse(env);
  return {
    logLevel: s.LOG_LEVEL,
    heartbeatPath: s.HEARTBEAT_PATH,
    port: s.HEALTH_PORT,
    host: s.HEALTH_HOST,
    evalIntervalMs: EVAL_INTERVAL_MS,
    cfsPollMs: s.SIDECAR_CFS_POLL_SECONDS * 1000,
    cfsTimeoutMs: CFS_ROUND_TIMEOUT_MS,
    cfs: { baseUrl: s.CFS_API_URL, caCertPath: s.CA_CERT, tokenFile: s.CFS_TOKEN_FILE },
    thresholds: thresholdsOf(s),
  };
}
