/**
 * Settings at start, on the built programs as processes: a mistyped variable or log level is refused with the setting
 * it was meant to be, while a level in another case is accepted and Kubernetes service links never warn or fail.
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

badStartLifecycle();

describe('a mistyped variable or log level is refused at start', () => {
  test.each([
    ['CFS_REQUEST_TIMEOUT_MSS', 'CFS_REQUEST_TIMEOUT_MS'],
    ['BATCHER_PAGE_SIZ', 'BATCHER_PAGE_SIZE'],
    ['cfs_api_url', 'CFS_API_URL'],
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

  test('a level in another case or an alias the logger knows (warn) is accepted', async () => {
    const env = batcherEnv({ STARTING_CFS_LOG_LEVEL: 'warn' });
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(errors(p)).toEqual([]);
  });
});

/** Kubernetes service links as a CSM namespace injects them (a Service cfs-batcher and cfs-ara, named ports too). */
const SERVICE_LINKS: Record<string, string> = {
  CFS_BATCHER_SERVICE_HOST: '10.16.0.10',
  CFS_BATCHER_SERVICE_PORT: '9088',
  CFS_BATCHER_SERVICE_PORT_METRICS: '9088',
  CFS_BATCHER_PORT: 'tcp://10.16.0.10:9088',
  CFS_BATCHER_PORT_9088_TCP: 'tcp://10.16.0.10:9088',
  CFS_BATCHER_PORT_9088_TCP_PROTO: 'tcp',
  CFS_BATCHER_PORT_9088_TCP_PORT: '9088',
  CFS_BATCHER_PORT_9088_TCP_ADDR: '10.16.0.10',
  CFS_ARA_SERVICE_HOST: '10.16.0.11',
  CFS_ARA_PORT_80_TCP: 'tcp://10.16.0.11:80',
  SIDECAR_HEALTH_SERVICE_HOST: '10.16.0.12',
  HEALTH_CHECK_PORT_8081_UDP_ADDR: '10.16.0.13',
};

describe('service links never warn or fail', () => {
  test('batcher runs its loop with them set, with no WARNING or ERROR line', async () => {
    const env = batcherEnv(SERVICE_LINKS);
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(p.lines.filter((l) => l.json?.level === 'WARNING' || l.json?.level === 'ERROR')).toEqual([]);
  });

  test('sidecar serves with them set, with no WARNING or ERROR line', async () => {
    const p = run(SIDECAR, sidecarEnv(SERVICE_LINKS));
    await p.waitForLine(/Health sidecar listening on/, 20_000);
    expect(p.lines.filter((l) => l.json?.level === 'WARNING' || l.json?.level === 'ERROR')).toEqual([]);
  });
});
