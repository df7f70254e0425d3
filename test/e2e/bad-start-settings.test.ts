/**
 * Settings at start, on the built programs as processes: a mistyped variable or log level is refused with the setting
 * it was meant to be, prefixed or not, while a level in another case is accepted and the variables Kubernetes, the
 * image and Istio give a CSM pod never warn or fail.
 */
import {
  BATCHER,
  SIDECAR,
  SIM,
  badStartLifecycle,
  batcherEnv,
  cycled,
  errors,
  exitOf,
  run,
  sidecarEnv,
} from './bad-start-programs';
import { CSM_POD_ENV } from '../helpers/csm-pod-env';

badStartLifecycle();

describe('a mistyped variable or log level is refused at start', () => {
  test.each([
    ['CFS_REQUEST_TIMEOUT_MSS', 'CFS_REQUEST_TIMEOUT_MS'],
    ['BATCHER_PENDING_SESSION_CAP', 'BATCHER_PENDING_SESSIONS_CAP'],
    ['cfs_api_url', 'CFS_API_URL'],
    // unprefixed: a typo of a setting is refused all the same
    ['LOG_LEVLE', 'LOG_LEVEL'],
    ['METRICS_PROT', 'METRICS_PORT'],
    ['HEARTBEAT_PAHT', 'HEARTBEAT_PATH'],
  ])('batcher: %s exits 2 naming %s', async (typo, meant) => {
    const r = await exitOf(run(BATCHER, batcherEnv({ [typo]: '5' })));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([expect.stringMatching(/^Configuration error: /)]);
    expect(r.errors[0]).toContain(`${typo} is not a batcher setting (did you mean ${meant}?)`);
    expect(r.plain).toEqual([]);
  });

  test('sidecar: SIDECAR_FRESHNES_SECONDS exits 2 naming SIDECAR_FRESHNESS_SECONDS', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ SIDECAR_FRESHNES_SECONDS: '30' })));
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toContain(
      'SIDECAR_FRESHNES_SECONDS is not a sidecar setting (did you mean SIDECAR_FRESHNESS_SECONDS?)',
    );
  });

  test('sidecar: HEARTBEAT_PAHT exits 2 naming HEARTBEAT_PATH', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ HEARTBEAT_PAHT: '/tmp/hb.json' })));
    expect(r.code).toBe(2);
    expect(r.errors[0]).toContain('HEARTBEAT_PAHT is not a sidecar setting (did you mean HEARTBEAT_PATH?)');
  });

  test('sidecar check: the same typo exits 2, not 1 (which means unhealthy)', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ SIDECAR_FRESHNES_SECONDS: '30' }), ['check', '--standalone']));
    expect(r.code).toBe(2);
    expect(r.errors[0]).toContain('did you mean SIDECAR_FRESHNESS_SECONDS?');
  });

  const allowed = 'is not a log level (one of DEBUG, INFO, WARNING, ERROR)';
  test('batcher: STARTING_CFS_LOG_LEVEL=verbose exits 2 naming the variable and the levels', async () => {
    const r = await exitOf(run(BATCHER, batcherEnv({ STARTING_CFS_LOG_LEVEL: 'verbose' })));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([`Configuration error: STARTING_CFS_LOG_LEVEL="verbose" ${allowed}`]);
  });

  test('sidecar: LOG_LEVEL=verbose exits 2', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ LOG_LEVEL: 'verbose' })));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([`Configuration error: LOG_LEVEL="verbose" ${allowed}`]);
  });

  test('simulator: LOG_LEVEL=verbose exits 2', async () => {
    const r = await exitOf(run(SIM, { LOG_LEVEL: 'verbose' }, ['--port', '0']));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([`Configuration error: LOG_LEVEL="verbose" ${allowed}`]);
  });

  test('batcher: LOG_LEVEL is its starting level, and wins over STARTING_CFS_LOG_LEVEL', async () => {
    // ERROR until the CFS option is read: the INFO start line is not written
    const env = batcherEnv({ LOG_LEVEL: 'ERROR', STARTING_CFS_LOG_LEVEL: 'DEBUG' });
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(p.lines.filter((l) => /Starting cfs-batcher/.test(String(l.json?.message)))).toEqual([]);
    // ...which the original's name alone does write
    const env2 = batcherEnv({ STARTING_CFS_LOG_LEVEL: 'DEBUG' });
    const p2 = run(BATCHER, env2);
    await cycled(p2, env2);
    expect(p2.lines.filter((l) => /Starting cfs-batcher/.test(String(l.json?.message)))).toHaveLength(1);
  });

  test('a level in another case or an alias the logger knows (warn) is accepted', async () => {
    const env = batcherEnv({ STARTING_CFS_LOG_LEVEL: 'warn' });
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(errors(p)).toEqual([]);
  });
});

describe('the environment of a CSM pod never warns or fails', () => {
  test('batcher runs its loop with it, with no WARNING or ERROR line', async () => {
    const env = batcherEnv(CSM_POD_ENV);
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(p.lines.filter((l) => l.json?.level === 'WARNING' || l.json?.level === 'ERROR')).toEqual([]);
  });

  test('sidecar serves with it, with no WARNING or ERROR line', async () => {
    const p = run(SIDECAR, sidecarEnv(CSM_POD_ENV));
    await p.waitForLine(/Health sidecar listening on/, 20_000);
    expect(p.lines.filter((l) => l.json?.level === 'WARNING' || l.json?.level === 'ERROR')).toEqual([]);
  });
});
