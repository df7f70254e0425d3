/**
 * GET /explain/{id} while CFS fails or the batcher has just restarted: a batch that is ready waits for CFS, not for
 * "the next send phase", and the answer says which call failed and when; a restarted batcher that has not rebuilt
 * promises no collect; a CFS that does not answer a lookup gets a 503 at the lookup's deadline.
 */
import request from 'supertest';
import {
  componentLookup,
  createBatcher,
  createBatcherApp,
  createExplainer,
  explainLookupClient,
} from '@cfs-batcher/batcher';
import { ask, cycles, drive, explainApp } from './explain-harness';
import { count, fastOptions, harnessLifecycle, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);

const LOOKUP = 'GET /v3/components/{component_id}';

const seed = (componentIds: string[]) => (sim: Harness['sim']) => {
  putConfig(sim);
  fastOptions(sim);
  putComponents(sim, componentIds);
};

/** "14:02:10 UTC" of a monotonic instant of the fake clock. */
const hhmmss = (t: number): string => `${new Date(t).toISOString().slice(11, 19)} UTC`;

drive(
  'held',
  'cfs_refusing',
  'a ready batch while every cycle fails on CFS: the failing call and its time',
  async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_window: 60 });
        putComponents(sim, ['x1']);
      },
    });
    await cycles(h, 1); // x1 filed, its window open
    h.sim.faults.add({ match: 'GET /v3/options', action: { type: 'status', status: 503 } });
    await cycles(h, 1, h.batcher, 61_000); // past the window; the cycle fails before it can send
    expect(h.batcher.state.lastCycle?.outcome).toBe('error');
    expect(h.sim.state.sessions.size).toBe(0);
    const failedAt = h.batcher.state.cfsLastError!.at_ms;
    const goodAt = h.batcher.state.cfsLastSuccess!;
    const a = await ask(explainApp(h).app, 'x1');
    expect(a.body.source).toBe('batcher');
    expect(a.body.reason).toMatch(/^Held: the batcher's cycles fail on CFS \(/);
    expect(a.body.reason).toContain(`GET`);
    expect(a.body.reason).toContain(`503`);
    expect(a.body.reason).toContain(`at ${hhmmss(failedAt)}; no cycle has succeeded since ${hhmmss(goodAt)})`);
    expect(a.body.hold).toMatchObject({ why: 'cfs_refusing', cfs: h.batcher.state.cfsLastError!.message });
    expect(a.body.reason).not.toContain('next send phase');
    return a;
  },
);

drive(
  'waiting_for_batch',
  null,
  'restarted and not rebuilt yet: no collect is promised before the rebuild',
  async () => {
    h = await startHarness({ seed: seed(['x1']) });
    await cycles(h, 2); // the first instance puts x1 in a session
    const name = [...h.sim.state.sessions.keys()][0]!;
    // The new instance cannot read CFS's sessions, so it cannot rebuild: it collects and sends nothing meanwhile.
    h.sim.faults.add({ match: 'GET /v3/sessions', action: { type: 'status', status: 503 } });
    const restarted = createBatcher({ client: h.client, clock: h.clock, sleep: async () => undefined });
    await cycles(h, 1, restarted);
    expect(restarted.state.rebuilt).toBe(false);
    expect(h.sim.state.sessions.get(name)).toBeDefined();
    const before = count(h.sim, LOOKUP);
    const a = await ask(explainApp(h, 4, restarted).app, 'x1');
    expect(count(h.sim, LOOKUP)).toBe(before + 1);
    expect(a.body.reason).toMatch(
      /^Waiting for batch cfg layer 0 \(l0\): CFS lists it pending, but the batcher has not rebuilt its state from CFS's sessions since it started/,
    );
    expect(a.body.reason).not.toContain('files it in a batch');
    expect(a.body.batch).toMatchObject({ collected: false, rebuilding: true });
    return a;
  },
);

it("CFS not answering the lookup: 503 at the client's request timeout, not a hang, one call", async () => {
  h = await startHarness({ seed: seed(['x1']) });
  await cycles(h, 1);
  h.sim.faults.add({ match: 'GET /v3/components/*', action: { type: 'hang' } });
  const lookups = explainLookupClient(
    { baseUrl: h.url, retryBudgetMs: 30_000, requestTimeoutMs: 300, connectTimeoutMs: 300 },
    h.batcher.metrics,
  );
  const explainer = createExplainer({
    state: h.batcher.state,
    clock: h.clock,
    getComponent: componentLookup(lookups),
    maxLookups: 4,
  });
  const before = count(h.sim, LOOKUP);
  const r = await request(createBatcherApp(h.batcher.metrics.registry, explainer)).get('/explain/x2');
  expect(r.status).toBe(503);
  expect(r.headers['retry-after']).toBe('5');
  expect(r.body).toMatchObject({ id: 'x2', error: 'cfs_unavailable' });
  expect(r.body.reason).toContain('its CFS lookup failed (timeout)');
  expect(count(h.sim, LOOKUP)).toBe(before + 1);
  expect(explainer.lookupsInFlight()).toBe(0);
});
