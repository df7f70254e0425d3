/**
 * Every setting the batcher reads, each declared once here with its default and range (docs/CONTRACTS.md,
 * "Environment"). `loadConfig(env)` is pure: a bad value is a ConfigError naming the variable, raised at start-up
 * so a misconfigured container fails fast and says why. The CFS options (batch size, window...) are not settings:
 * they come from CFS itself every cycle (rules/options.ts).
 */
import {
  ConfigError,
  DEFAULT_HEARTBEAT_PATH,
  cfsClientOptionsFromEnv,
  envInt,
  envLogLevel,
  envString,
  refuseUnknownSettings,
  settingNames,
  type CfsClientOptions,
  type CfsLogLevel,
  type SettingsScope,
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
  /** No create while this many batcher sessions are still pending in CFS (0 = no cap). */
  pendingSessionsCap: number;
  /** At most this many creates in any 60 s (0 = no cap): a guard far above an operator's pace, not the pace. */
  createsPerMinuteCap: number;
  /** While the pending cap holds, the send phase reads the pending sessions this often to go on when they start. */
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
  /** CFS lookups of `GET /explain/{id}` in flight at most (one per request; more requests are answered 503). */
  explainLookups: number;
  /** Log level until the first `logging_level` option is read from CFS. */
  startingLogLevel: CfsLogLevel;
  cfs: CfsClientOptions;
  tuning: Tuning;
}

export function tuningFromEnv(env: Env): Tuning {
  const t: Tuning = {
    cfsWaitInitialMs: envInt(env, 'BATCHER_CFS_WAIT_INITIAL_MS', 1000, 1, 600_000),
    cfsWaitMaxMs: envInt(env, 'BATCHER_CFS_WAIT_MAX_MS', 60_000, 1, 3_600_000),
    waitStepMs: envInt(env, 'BATCHER_WAIT_STEP_MS', 1000, 1, 1000),
    optionsRefreshMs: envInt(env, 'BATCHER_OPTIONS_REFRESH_MS', 10_000, 1000, 600_000),
    // 30 s + one create's request timeout (10 s) stays well under the sidecar's 120 s send budget.
    sendSliceMs: envInt(env, 'BATCHER_SEND_SLICE_MS', 30_000, 100, 600_000),
    // A hanging PATCH costs one request timeout (10 s) per concurrent slot: a cycle spends at most ~20 s on them.
    patchBudgetMs: envInt(env, 'BATCHER_PATCH_BUDGET_MS', 10_000, 100, 600_000),
    // Pacing (scripts/src/pacing-measure.ts, slow simulated operator): at most 40 sessions wait in pending, 40/rate s
    // each, far under the 300 s pending timeout for any operator above 0.14 starts/s. The send phase reads the
    // pending sessions every 100 ms while the cap holds and creates as they start, so the pace is the operator's:
    // a read lists at most the cap's few sessions (the original read every in-flight session every cycle), and
    // 250 ms cost 100k pending ~15% more time to converge against an operator starting sessions in 0.5 s.
    // 6000/min is a guard only: 100 creates a second is far above what an operator starts (a fixed 240/min was the
    // pace itself against a prompt operator: 50k pending took 8 minutes).
    pendingSessionsCap: envInt(env, 'BATCHER_PENDING_SESSIONS_CAP', 40, 0, 100_000),
    createsPerMinuteCap: envInt(env, 'BATCHER_CREATES_PER_MINUTE', 6000, 0, 100_000),
    pacingPollMs: envInt(env, 'BATCHER_PACING_POLL_MS', 100, 10, 10_000),
    // A stalled operator costs a phase this long: then the cycle goes on (completions, new work) and the next one
    // tries again.
    pacingStallMs: envInt(env, 'BATCHER_PACING_STALL_MS', 5000, 0, 600_000),
    createRetryInitialMs: envInt(env, 'BATCHER_CREATE_RETRY_INITIAL_MS', 30_000, 1, 3_600_000),
    createRetryMaxMs: envInt(env, 'BATCHER_CREATE_RETRY_MAX_MS', 15 * 60_000, 1, 86_400_000),
    patchConcurrency: envInt(env, 'BATCHER_PATCH_CONCURRENCY', 8, 1, 256),
    pageSize: envInt(env, 'BATCHER_PAGE_SIZE', 0, 0, 100_000),
    createCommitHorizonMs: envInt(env, 'BATCHER_CREATE_COMMIT_HORIZON_MS', 120_000, 1000, 3_600_000),
    // 1000 x 25 components: check_status and collect run at least every 1000 creates; 100 spread a 50k wave of
    // 2000 sessions over 20 cycles, each one listing every pending component.
    sendMaxPerPhase: envInt(env, 'BATCHER_SEND_MAX_PER_PHASE', 1000, 1, 10_000),
  };
  if (t.cfsWaitMaxMs < t.cfsWaitInitialMs) {
    throw new ConfigError(
      `BATCHER_CFS_WAIT_MAX_MS=${t.cfsWaitMaxMs} is below BATCHER_CFS_WAIT_INITIAL_MS=${t.cfsWaitInitialMs}`,
    );
  }
  if (t.createRetryMaxMs < t.createRetryInitialMs) {
    throw new ConfigError(
      `BATCHER_CREATE_RETRY_MAX_MS=${t.createRetryMaxMs} is below BATCHER_CREATE_RETRY_INITIAL_MS=${t.createRetryInitialMs}`,
    );
  }
  return t;
}

/** The defaults, from the one declaration above. */
export const DEFAULT_TUNING: Readonly<Tuning> = Object.freeze(tuningFromEnv({}));

/** Every setting from `env`, each declaration with its default (read unconditionally: `settingNames` relies on it). */
function readConfig(env: Env): BatcherConfig {
  return {
    heartbeatPath: envString(env, 'HEARTBEAT_PATH', DEFAULT_HEARTBEAT_PATH),
    metricsPort: envInt(env, 'METRICS_PORT', 9088, 0, 65535),
    explainLookups: envInt(env, 'BATCHER_EXPLAIN_LOOKUPS', 4, 1, 64),
    // Strict, unlike the `logging_level` option (CFS data, which falls back to INFO): a typo here is ours to refuse.
    startingLogLevel: envLogLevel(env, 'STARTING_CFS_LOG_LEVEL', 'INFO'),
    cfs: cfsClientOptionsFromEnv(env),
    tuning: tuningFromEnv(env),
  };
}

/** The batcher's variables: the names its declarations read; a CFS_ or BATCHER_ variable outside them is refused. */
export const BATCHER_SETTINGS: SettingsScope = Object.freeze({
  program: 'batcher',
  prefixes: ['CFS_', 'BATCHER_'],
  known: settingNames(readConfig),
});

/** `alsoKnown`: variables a wrapper of the batcher reads itself (the e2e fault fixture). */
export function loadConfig(env: Env, alsoKnown: readonly string[] = []): BatcherConfig {
  refuseUnknownSettings(env, { ...BATCHER_SETTINGS, known: [...BATCHER_SETTINGS.known, ...alsoKnown] });
  return readConfig(env);
}
