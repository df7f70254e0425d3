/**
 * GET /explain/{id} for ids the batcher's memory does not hold: one GET of the component from CFS (configured,
 * retry limit, disabled, not collected yet, batcher_disable, missing), at most `maxLookups` at once however many
 * requests come, never a retry, never a heartbeat stamp; and the HTTP surface (ids refused, methods, paths).
 */
import type { Server } from 'node:http';
import request from 'supertest';
import { serveMetrics } from '@cfs-batcher/batcher';
import { ask, cycles, drive, explainApp } from './explain-harness';
import {
  count,
  fastOptions,
  harnessLifecycle,
  ids,
  putComponents,
  putConfig,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
harnessLifecycle(() => h);

const LOOKUP = 'GET /v3/components/{component_id}';

/** Asks about `id` and checks that CFS was asked exactly once. */
async function askCfs(id: string) {
  const before = count(h.sim, LOOKUP);
  const a = await ask(explainApp(h).app, id);
  expect(count(h.sim, LOOKUP)).toBe(before + 1);
  expect(a.body.source).toBe('cfs');
  return a;
}

const seed =
  (componentIds: string[], over: Record<string, unknown> = {}, options: Record<string, unknown> = {}) =>
  (sim: Harness['sim']) => {
    putConfig(sim);
    fastOptions(sim, options);
    putComponents(sim, componentIds, over);
  };

drive('unknown', null, 'CFS has no such component: 404 with the same body shape', async () => {
  h = await startHarness({ seed: seed(['x1']) });
  await cycles(h, 1);
  const a = await askCfs('x9999c0s0b0n0');
  expect(a.body).toMatchObject({ id: 'x9999c0s0b0n0', state: 'unknown' });
  expect(a.body.reason).toMatch(/^Unknown: CFS has no component with this id/);
  return a;
});

drive('not_pending', null, 'configured: the status and the last batcher session', async () => {
  h = await startHarness({ seed: seed(['x1']) });
  await cycles(h, 2);
  const name = [...h.sim.state.sessions.keys()][0]!;
  h.sim.operator.runToCompletion();
  await cycles(h, 1);
  const a = await askCfs('x1');
  expect(a.body.reason).toBe(
    `Not pending: CFS reports it configured, so there is nothing for the batcher to do; its last batcher session was ${name} (applied).`,
  );
  expect(a.body.last_session).toMatchObject({ name, status: 'applied' });
  return a;
});

drive('not_batched', 'retry_limit', 'CFS stopped retrying: error_count and the policy in force', async () => {
  h = await startHarness({ seed: seed(['x1']) });
  h.sim.operator.setComponentOutcome('x1', 'fail');
  for (let round = 0; round < 10 && h.sim.state.components.get('x1')!.error_count! < 3; round++) {
    await cycles(h, 2);
    h.sim.operator.runToCompletion();
  }
  await cycles(h, 1);
  expect(h.sim.state.components.get('x1')!.error_count).toBe(3); // failed sessions of the batcher's own
  expect(h.sim.state.sessions.size).toBeGreaterThanOrEqual(2);
  const a = await askCfs('x1');
  expect(a.body.reason).toMatch(
    /^Not batched: CFS stopped retrying it after 3 failed attempts \(error_count 3 reached the retry limit 3 from the default_batcher_retry_policy option\)/,
  );
  expect(a.body).toMatchObject({ error_count: 3, retry_policy: 3, retry_policy_from: 'default_batcher_retry_policy' });
  return a;
});

drive('not_batched', 'disabled', 'disabled in CFS: the batcher only configures enabled components', async () => {
  h = await startHarness({ seed: seed(['x1', 'x2']) });
  h.sim.state.components.get('x2')!.enabled = false;
  await cycles(h, 2);
  const a = await askCfs('x2');
  expect(a.body.reason).toMatch(/^Not batched: the component is disabled in CFS \(enabled=false\)/);
  return a;
});

drive('waiting_for_batch', null, 'pending in CFS but not collected yet: the next collect files it', async () => {
  h = await startHarness({ seed: seed(['x1'], {}, { batch_window: 600 }) });
  await cycles(h, 1);
  putComponents(h.sim, ['x2']);
  const a = await askCfs('x2');
  expect(a.body.reason).toMatch(
    /^Waiting for batch cfg layer 0 \(l0\): CFS lists it pending but the batcher has not collected it yet; the next collect, at /,
  );
  expect(a.body.batch).toMatchObject({ configuration: 'cfg', layers: '0', collected: false });
  return a;
});

drive('held', 'batcher_disable', 'disabled from the start: nothing collected, CFS says pending', async () => {
  h = await startHarness({ seed: seed(['x1'], {}, { batcher_disable: true }) });
  await cycles(h, 2);
  const a = await askCfs('x1');
  expect(a.body.reason).toMatch(/^Held: batcher_disable is true in the CFS options/);
  return a;
});

describe('CFS is protected', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('a flood of explain requests for unknown ids makes at most maxLookups CFS calls at once, one per request', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    await cycles(h, 1);
    h.sim.faults.add({ match: 'GET /v3/components/*', action: { type: 'latency', ms: 300 } });
    h.sim.stats.reset();
    const { explainer } = explainApp(h, 3);
    server = await serveMetrics(h.batcher.metrics.registry, 0, '127.0.0.1', explainer);
    const answers = await Promise.all(ids('nope', 40).map((id) => request(server!).get(`/explain/${id}`)));
    expect(h.sim.stats.peakInFlight(LOOKUP)).toBeLessThanOrEqual(3);
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 404 || s === 503)).toBe(true);
    const busy = answers.filter((r) => r.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    for (const r of busy) {
      expect(r.headers['retry-after']).toBe('1');
      expect(r.body).toMatchObject({ error: 'busy' });
    }
    // Each 404 made exactly one call; a busy answer made none.
    expect(count(h.sim, LOOKUP)).toBe(statuses.filter((s) => s === 404).length);
    expect(explainer.lookupsInFlight()).toBe(0);
  });

  it('CFS failing the lookup: 503 with Retry-After, one call (no retry), and no heartbeat progress', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    await cycles(h, 1);
    const answeredAt = h.batcher.state.creating.lastCfsAnswerAt;
    h.clock.advance(5000);
    h.sim.faults.add({ match: 'GET /v3/components/*', action: { type: 'status', status: 503 } });
    const before = count(h.sim, LOOKUP);
    const a = await ask(explainApp(h).app, 'x2');
    expect(a.status).toBe(503);
    expect(a.headers['retry-after']).toBe('5');
    expect(a.body).toMatchObject({ id: 'x2', error: 'cfs_unavailable' });
    expect(a.body.reason).toContain('its CFS lookup answered 503');
    expect(count(h.sim, LOOKUP)).toBe(before + 1);
    // An explain lookup is not the main loop's progress: the sidecar must not see a stopped loop as alive.
    expect(h.batcher.state.creating.lastCfsAnswerAt).toBe(answeredAt);
    const m = await h.batcher.metrics.cfsRequests.get();
    expect(m.values.find((v) => v.labels.route === '/v3/components/{component_id}')?.value).toBe(1);
  });
});

describe('the HTTP surface', () => {
  it.each([
    ['a slash', 'a%2Fb'],
    ['markup', '%3Cscript%3Ealert(1)%3C%2Fscript%3E'],
    ['a control character', 'x1%0Ax2'],
    ['256 characters', 'x'.repeat(256)],
    ['bad percent-encoding', '%E0%A4%A'],
  ])('an id with %s is refused with 400 JSON that does not repeat it', async (_what, raw) => {
    h = await startHarness({ seed: seed(['x1']) });
    const r = await request(explainApp(h).app).get(`/explain/${raw}`);
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.text).not.toContain('script');
    expect(r.text).not.toContain('x'.repeat(256));
    expect(r.text).not.toContain('x1\nx2');
    expect(count(h.sim, LOOKUP)).toBe(0);
  });

  it.each([['.'], ['..'], ['%2E'], ['%2e.']])(
    'the dot segment %s is refused with 400 before CFS is asked anything',
    async (raw) => {
      // URL resolution turns /components/. into the whole list and /components/.. into the API root: a request
      // for those would make CFS answer a list, and the batcher then reports a failing CFS.
      h = await startHarness({ seed: seed(['x1']) });
      await cycles(h, 1);
      h.sim.stats.reset();
      const r = await request(explainApp(h).app).get(`/explain/${raw}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_id' });
      expect(h.sim.stats.snapshot().total).toBe(0);
    },
  );

  it('a path that is not valid percent-encoding is told so, without repeating it', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    const r = await request(explainApp(h).app).get('/explain/x1%E0%A4%A');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'bad_request', reason: 'the path is not valid percent-encoding' });
  });

  it('GET only on known paths (405), unknown paths 404, /metrics unchanged', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    await cycles(h, 1);
    const { app } = explainApp(h);
    for (const path of ['/explain/x1', '/metrics']) {
      const r = await request(app).post(path);
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
    for (const path of ['/nope', '/explain', '/explain/', '/explain/x1/more'])
      expect((await request(app).get(path)).status).toBe(404);
    const m = await request(app).get('/metrics');
    expect(m.status).toBe(200);
    expect(m.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.text).toContain('cfs_batcher_cycles_total{outcome="ok"} 1');
  });
});
