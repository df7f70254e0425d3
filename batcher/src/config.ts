/**
 * The batcher's settings, declared once in one zod schema (`BATCHER_SETTINGS`: name, default, meaning, why a site
 * changes it); docs/CONTRACTS.md, "Environment", lists them. Everything else that paces the loop is a named
 * constant (`DEFAULT_TUNING`): no site has a reason to change it, and tests that need other values pass their own
 * `Tuning` to createBatcher. `loadConfig(env)` is pure: a bad or unknown variable is a ConfigError raised at
 * start-up. The CFS options (batch size, window...) are not settings: they come from CFS itself every cycle
 * (rules/options.ts).
 */
import {
  CFS_CLIENT_DEFAULTS,
  CFS_CONNECTION_SETTINGS,
  DEFAULT_HEARTBEAT_PATH,
  defineSettings,
  intSetting,
  logLevelSetting,
  refuseUnknownSettings,
  scopeOf,
  textSetting,
  type CfsClientOptions,
  type CfsLogLevel,
} from '@cfs-batcher/shared';

type Env = NodeJS.ProcessEnv;

/** How the loop and its phases pace themselves. */
export interface Tuning {
  /** waiting_for_cfs: first delay after a failed cycle, doubling up to min(max, batcher_check_interval). */
  cfsWaitInitialMs: number;
  cfsWaitMaxMs: number;
  /**
   * Sleep and wait phases sleep in steps of this and stamp the heartbeat after each (<= 1 s: the sidecar expects a
   * beat every second in every phase).
   */
  waitStepMs: number;
  /** While sleeping, GET /v3/options at most this often; a shorter interval or a batcher_disable change ends the sleep. */
  optionsRefreshMs: number;
  /** The send phase stops creating after this long and goes on next cycle (well under the sidecar's send budget). */
  sendSliceMs: number;
  /** Completion PATCHes start only within this time per cycle; the rest wait (their batches held) for the next one. */
  patchBudgetMs: number;
  /**
   * The ceiling of the pending-sessions allowance (rules/allowance.ts), which otherwise follows the operator's pace;
   * 0 = no pacing on pending sessions (the original's behaviour).
   */
  pendingSessionsCap: number;
  /** At most this many creates in any 60 s (0 = no cap): a guard far above an operator's pace, not the pace. */
  createsPerMinuteCap: number;
  /** While the allowance is used up, the send phase reads the pending sessions this often to go on when they start. */
  pacingPollMs: number;
  /** ...and ends when none has left pending for this long (the next cycle tries again). */
  pacingStallMs: number;
  /** Per-batch delay after a failed create: initial, doubling on each further failure up to max. */
  createRetryInitialMs: number;
  createRetryMaxMs: number;
  /** Concurrent component PATCHes after a session ends. */
  patchConcurrency: number;
  /** Page size of the pending-components list; 0 = the server's default_page_size. */
  pageSize: number;
  /**
   * How long a POST whose answer was lost may still commit in CFS: its name is watched (members held) this long
   * before it is retired. Default 120 s > a POST's worst client life (retry budget 30 s + one 10 s attempt) plus
   * server-side processing (gunicorn's 30 s worker timeout), with margin.
   */
  createCommitHorizonMs: number;
  /** New sessions a send phase creates at most (the rest wait a cycle): bounds the phase in count. */
  sendMaxPerPhase: number;
}

export interface BatcherConfig {
  heartbeatPath: string;
  /** 0 disables the /metrics server. */
  metricsPort: number;
  /** Log level until the first `logging_level` option is read from CFS. */
  startingLogLevel: CfsLogLevel;
  cfs: CfsClientOptions;
  tuning: Tuning;
}

/** CFS lookups of `GET /explain/{id}` in flight at most (one per request; more requests are answered 503). */
export const EXPLAIN_LOOKUPS = 4;

/** The pace of the loop: constants, each with the reason for its value. */
export const DEFAULT_TUNING: Readonly<Tuning> = Object.freeze({
  cfsWaitInitialMs: 1000,
  cfsWaitMaxMs: 60_000,
  // The sidecar expects a beat every second in every phase.
  waitStepMs: 1000,
  optionsRefreshMs: 10_000,
  // 30 s + one create's request timeout (10 s) stays well under the sidecar's 120 s send budget.
  sendSliceMs: 30_000,
  // A hanging PATCH costs one request timeout (10 s) per concurrent slot: a cycle spends at most ~20 s on them.
  patchBudgetMs: 10_000,
  // Pacing: the sessions allowed pending in CFS follow how promptly the operator starts them (rules/allowance.ts);
  // this is their ceiling. 1000 = one page of the pending list at CFS's default page size, and the most a suddenly
  // stopped operator leaves to be deleted. The send phase reads the pending sessions every 100 ms while the allowance
  // is used up and creates as they start (250 ms cost 100k pending ~15% more time to converge against a prompt
  // operator). 6000/min is a guard only: 100 creates a second is far above what an operator starts (a fixed 240/min
  // was the pace itself against a prompt operator: 50k pending took 8 minutes).
  pendingSessionsCap: 1000,
  createsPerMinuteCap: 6000,
  pacingPollMs: 100,
  // A stalled operator costs a phase this long: then the cycle goes on (completions, new work) and the next one
  // tries again.
  pacingStallMs: 5000,
  createRetryInitialMs: 30_000,
  createRetryMaxMs: 15 * 60_000,
  patchConcurrency: 8,
  // The server's default_page_size.
  pageSize: 0,
  createCommitHorizonMs: 120_000,
  // 1000 x 25 components: check_status and collect run at least every 1000 creates; 100 spread a 50k wave of
  // 2000 sessions over 20 cycles, each one listing every pending component.
  sendMaxPerPhase: 1000,
});

/** Every setting of the batcher: the CFS connection, where it writes, what it serves, how much it logs. */
export const BATCHER_SETTINGS = defineSettings({
  program: 'batcher',
  prefixes: ['CFS_', 'BATCHER_'],
  settings: {
    ...CFS_CONNECTION_SETTINGS,
    CFS_REQUEST_TIMEOUT_MS: {
      // at most 10 minutes: a timer above 2^31-1 ms fires at once, and a longer call would hold the loop past any
      // liveness window
      schema: intSetting(1, 600_000),
      default: String(CFS_CLIENT_DEFAULTS.requestTimeoutMs),
      meaning: 'per-attempt deadline of a CFS call, headers and body (1..600000)',
      reason:
        "a CFS slower than 10 s per page at a large site; raise the sidecar's SIDECAR_FRESHNESS_SECONDS above it too",
    },
    CFS_RETRY_BUDGET_MS: {
      schema: intSetting(0, 600_000),
      default: String(CFS_CLIENT_DEFAULTS.retryBudgetMs),
      meaning: 'total time an idempotent CFS call may spend retrying before the cycle waits for CFS (0..600000)',
      reason: 'a site whose CFS restarts take longer than 30 s and that would rather retry than wait a cycle',
    },
    HEARTBEAT_PATH: {
      schema: textSetting(),
      default: DEFAULT_HEARTBEAT_PATH,
      meaning: 'heartbeat file on the volume shared with the sidecar',
      reason: 'the volume is mounted elsewhere (the same path must be given to the sidecar)',
    },
    METRICS_PORT: {
      schema: intSetting(0, 65535),
      default: '9088',
      meaning: '/metrics and /explain/{id} port (0 disables both)',
      reason: 'the port is taken in the pod, or the site scrapes another one',
    },
    LOG_LEVEL: {
      // Strict, unlike the `logging_level` option (CFS data, which falls back to INFO): a typo here is ours.
      schema: logLevelSetting(),
      default: 'INFO',
      meaning: 'log level until the `logging_level` CFS option is read, which then rules',
      reason: 'DEBUG while diagnosing a start-up that never reaches CFS',
      aliases: ['STARTING_CFS_LOG_LEVEL'],
    },
    BATCHER_PENDING_SESSIONS_CAP: {
      schema: intSetting(0, 100_000),
      default: String(DEFAULT_TUNING.pendingSessionsCap),
      meaning:
        'ceiling of the pending-sessions allowance, which otherwise follows how promptly the operator starts ' +
        'sessions (0 = no pacing, the original behaviour)',
      reason:
        "a site whose Kubernetes quota bounds CFS's jobs lowers it; 0 if the allowance ever misjudges an operator",
    },
  },
  retired: {
    CFS_CONNECT_TIMEOUT_MS: 'a constant, 3000 ms',
    BATCHER_EXPLAIN_LOOKUPS: `a constant, ${EXPLAIN_LOOKUPS}`,
    ...Object.fromEntries(
      [
        'CFS_WAIT_INITIAL_MS',
        'CFS_WAIT_MAX_MS',
        'WAIT_STEP_MS',
        'OPTIONS_REFRESH_MS',
        'SEND_SLICE_MS',
        'PATCH_BUDGET_MS',
        'CREATES_PER_MINUTE',
        'PACING_POLL_MS',
        'PACING_STALL_MS',
        'CREATE_RETRY_INITIAL_MS',
        'CREATE_RETRY_MAX_MS',
        'PATCH_CONCURRENCY',
        'PAGE_SIZE',
        'CREATE_COMMIT_HORIZON_MS',
        'SEND_MAX_PER_PHASE',
      ].map((n) => [`BATCHER_${n}`, 'a constant of batcher/src/config.ts, DEFAULT_TUNING']),
    ),
  },
});

/** `alsoKnown`: variables a wrapper of the batcher reads itself (the e2e fault fixture). */
export function loadConfig(env: Env, alsoKnown: readonly string[] = []): BatcherConfig {
  refuseUnknownSettings(env, scopeOf(BATCHER_SETTINGS, alsoKnown));
  const s = BATCHER_SETTINGS.parse(env);
  return {
    heartbeatPath: s.HEARTBEAT_PATH,
    metricsPort: s.METRICS_PORT,
    startingLogLevel: s.LOG_LEVEL,
    cfs: {
      baseUrl: s.CFS_API_URL,
      connectTimeoutMs: CFS_CLIENT_DEFAULTS.connectTimeoutMs,
      requestTimeoutMs: s.CFS_REQUEST_TIMEOUT_MS,
      retryBudgetMs: s.CFS_RETRY_BUDGET_MS,
      caCertPath: s.CA_CERT,
      tokenFile: s.CFS_TOKEN_FILE,
    },
    tuning: { ...DEFAULT_TUNING, pendingSessionsCap: s.BATCHER_PENDING_SESSIONS_CAP },
  };
}
