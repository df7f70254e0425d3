/**
 * CFS_API_URL is probed at start, on the built batcher and sidecar as processes: a base without /v3 is fatal only when
 * base + /v3 answers; otherwise one loud line (or a warning when CFS is down, and a new check when CFS first answers)
 * and the usual wait, with the route label the path really requested.
 */
import { createSimulator } from '@cfs-batcher/cfs-sim';
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';
import { request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/wait';
import {
  BATCHER,
  SIDECAR,
  badStartLifecycle,
  batcherEnv,
  exitOf,
  origin,
  run,
  sidecarEnv,
  waitOpts,
} from './bad-start-programs';

badStartLifecycle();

describe('CFS_API_URL is probed at start', () => {
  test('a base without /v3 where base + /v3 answers: exit 2 naming the variable and the fix', async () => {
    const r = await exitOf(run(BATCHER, batcherEnv({ CFS_API_URL: origin })));
    expect(r.code).toBe(2);
    // The probe runs beside the loop, so the loop's own first 404 may be logged before it: the last line says why.
    expect(r.errors.at(-1)).toBe(
      `Configuration error: CFS_API_URL=${origin} answers 404 for GET /options while ${origin}/v3 answers it: did you mean CFS_API_URL=${origin}/v3?`,
    );
    for (const e of r.errors.slice(0, -1)) expect(e).toMatch(/^Unexpected response from CFS: 404 from CFS for GET /);
  });

  test('a 404 with no v3 answer is one loud ERROR line, then the usual wait; the route label is what was sent', async () => {
    const metricsPort = await freePort();
    const base = `${origin}/apis/cfs/v3`;
    const p = run(BATCHER, batcherEnv({ CFS_API_URL: base, METRICS_PORT: String(metricsPort) }));
    const probe = await p.waitForLine(
      (l) => String(l.json?.message).startsWith(`CFS_API_URL=${base} answers 404`),
      20_000,
    );
    expect(probe.json).toMatchObject({ level: 'ERROR', setting: 'CFS_API_URL' });
    expect(String(probe.json?.message)).toContain('is it the CFS v3 API');
    // still waiting for CFS two cycles later: not fatal, liveness untouched
    await waitFor(
      () => p.find((l) => l.json?.message === 'Waiting for CFS to become available', probe.at).length >= 2,
      waitOpts('two waits after the probe', p),
    );
    expect(p.alive).toBe(true);
    const sent = p.find((l) => l.json?.status === 404 && typeof l.json.route === 'string').map((l) => l.json?.route);
    expect(sent.length).toBeGreaterThan(0);
    for (const route of sent) expect(String(route)).toMatch(/^\/apis\/cfs\/v3\//);
    const metrics = await request(`http://127.0.0.1:${metricsPort}/metrics`);
    const text = 'text' in metrics ? metrics.text : '';
    expect(text).toMatch(/cfs_batcher_cfs_requests_total\{[^}]*route="\/apis\/cfs\/v3\/sessions"/);
    expect(text).not.toMatch(/route="\/v3\//);
  });

  test('a CFS that is down at start: a warning for a base without /v3, no exit', async () => {
    const closed = await freePort();
    const base = `http://127.0.0.1:${closed}/apis/cfs`;
    const p = run(BATCHER, batcherEnv({ CFS_API_URL: base }));
    const warn = await p.waitForLine(
      (l) => String(l.json?.message).startsWith(`CFS_API_URL=${base} does not end`),
      20_000,
    );
    expect(warn.json?.level).toBe('WARNING');
    await waitFor(
      () => p.find((l) => l.json?.message === 'Waiting for CFS to become available', warn.at).length >= 2,
      waitOpts('two waits after the warning', p),
    );
    expect(p.alive).toBe(true);
    expect(p.find((l) => l.json?.route === '/apis/cfs/sessions').length).toBeGreaterThan(0);
  });

  test('a CFS that is down at start and then answers: the base is checked again, and proven wrong, exit 2', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const p = run(BATCHER, batcherEnv({ CFS_API_URL: base }));
    await p.waitForLine((l) => String(l.json?.message).startsWith(`CFS_API_URL=${base} does not end`), 20_000);
    await waitFor(
      () => p.find((l) => l.json?.message === 'Waiting for CFS to become available').length >= 1,
      waitOpts('a wait for CFS', p),
    );
    const late = createSimulator();
    late.state.options = { ...DEFAULT_OPTIONS };
    await late.listen(port, '127.0.0.1');
    try {
      const r = await exitOf(p);
      expect(r.code).toBe(2);
      expect(r.errors.at(-1)).toBe(
        `Configuration error: CFS_API_URL=${base} answers 404 for GET /options while ${base}/v3 answers it: did you mean CFS_API_URL=${base}/v3?`,
      );
    } finally {
      await late.close();
    }
  });
});

describe('the health sidecar checks its CFS_API_URL as the batcher does', () => {
  test('a base without /v3 where base + /v3 answers: exit 2 with the same did-you-mean, not a CFS outage', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ CFS_API_URL: origin, SIDECAR_CFS_POLL_SECONDS: '1' })));
    expect(r.code).toBe(2);
    expect(r.errors.at(-1)).toBe(
      `Configuration error: CFS_API_URL=${origin} answers 404 for GET /options while ${origin}/v3 answers it: did you mean CFS_API_URL=${origin}/v3?`,
    );
  });

  test('a correct base: the sidecar runs on', async () => {
    const p = run(SIDECAR, sidecarEnv({ CFS_API_URL: `${origin}/v3`, SIDECAR_CFS_POLL_SECONDS: '1' }));
    await p.waitForLine((l) => l.json?.message === 'CFS reachable from the sidecar', 20_000);
    expect(p.alive).toBe(true);
    expect(errorsOf(p)).toEqual([]);
  });
});

const errorsOf = (p: ReturnType<typeof run>): string[] =>
  p.lines.filter((l) => l.json?.level === 'ERROR').map((l) => String(l.json?.message));
