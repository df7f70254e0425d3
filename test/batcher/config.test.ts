/** config.ts: every setting with its default and range, read by a pure function; the rest are constants. */
import { ConfigError, DEFAULT_HEARTBEAT_PATH } from '@cfs-batcher/shared';
import { DEFAULT_TUNING, loadConfig } from '@cfs-batcher/batcher';

it('an empty environment gives the documented defaults', () => {
  const c = loadConfig({});
  expect(c).toMatchObject({ heartbeatPath: DEFAULT_HEARTBEAT_PATH, metricsPort: 9088, startingLogLevel: 'INFO' });
  expect(c.tuning).toEqual({
    cfsWaitInitialMs: 1000,
    cfsWaitMaxMs: 60_000,
    waitStepMs: 1000,
    optionsRefreshMs: 10_000,
    sendSliceMs: 30_000,
    patchBudgetMs: 10_000,
    pendingSessionsCap: 1000,
    createsPerMinuteCap: 6000,
    pacingPollMs: 100,
    pacingStallMs: 5000,
    createRetryInitialMs: 30_000,
    createRetryMaxMs: 900_000,
    patchConcurrency: 8,
    pageSize: 0,
    createCommitHorizonMs: 120_000,
    sendMaxPerPhase: 1000,
  });
  expect(DEFAULT_TUNING).toEqual(c.tuning);
});

it('reads its settings; the pace of the loop is not one of them', () => {
  const c = loadConfig({
    BATCHER_PENDING_SESSIONS_CAP: '5',
    CFS_REQUEST_TIMEOUT_MS: '2000',
    CFS_RETRY_BUDGET_MS: '0',
    LOG_LEVEL: 'debug',
  });
  expect(c.tuning).toEqual({ ...DEFAULT_TUNING, pendingSessionsCap: 5 });
  expect(c.cfs).toMatchObject({ requestTimeoutMs: 2000, retryBudgetMs: 0, connectTimeoutMs: 3000 });
  expect(c.startingLogLevel).toBe('DEBUG');
  expect(() => loadConfig({ BATCHER_PAGE_SIZE: '500' })).toThrow(/BATCHER_PAGE_SIZE is not a batcher setting any more/);
});

it.each([
  [{ METRICS_PORT: 'nine' }, 'METRICS_PORT="nine" is not an integer'],
  [{ METRICS_PORT: '70000' }, 'METRICS_PORT=70000 is outside 0..65535'],
  [{ BATCHER_PENDING_SESSIONS_CAP: '-1' }, 'BATCHER_PENDING_SESSIONS_CAP=-1 is outside 0..100000'],
  [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud" is not a log level'],
])('%j is a ConfigError naming the variable', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});
