/** config.ts: every setting with its default and range, read by a pure function. */
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
    pendingSessionsCap: 40,
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

it('reads the BATCHER_ tuning variables', () => {
  const c = loadConfig({
    BATCHER_WAIT_STEP_MS: '250',
    BATCHER_PAGE_SIZE: '500',
    BATCHER_PATCH_CONCURRENCY: '2',
    STARTING_CFS_LOG_LEVEL: 'debug',
  });
  expect(c.tuning).toMatchObject({ waitStepMs: 250, pageSize: 500, patchConcurrency: 2 });
  expect(c.startingLogLevel).toBe('DEBUG');
});

it.each([
  [{ METRICS_PORT: 'nine' }, 'METRICS_PORT="nine" is not an integer'],
  [{ METRICS_PORT: '70000' }, 'METRICS_PORT=70000 is outside 0..65535'],
  [{ BATCHER_WAIT_STEP_MS: '0' }, 'BATCHER_WAIT_STEP_MS=0 is outside 1..1000'],
  [{ BATCHER_WAIT_STEP_MS: '5000' }, 'BATCHER_WAIT_STEP_MS=5000 is outside 1..1000'],
  [
    { BATCHER_CFS_WAIT_INITIAL_MS: '5000', BATCHER_CFS_WAIT_MAX_MS: '100' },
    'BATCHER_CFS_WAIT_MAX_MS=100 is below BATCHER_CFS_WAIT_INITIAL_MS=5000',
  ],
  [
    { BATCHER_CREATE_RETRY_MAX_MS: '10' },
    'BATCHER_CREATE_RETRY_MAX_MS=10 is below BATCHER_CREATE_RETRY_INITIAL_MS=30000',
  ],
])('%j is a ConfigError naming the variable', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});
