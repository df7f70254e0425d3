/**
 * Against the simulator: any CFS answer during rebuild or a cycle is logged and waited out with backoff, never a crash;
 * only a bug inside a cycle is fatal. Each was a defect of the original batcher.
 */
import type { Phase } from '@cfs-batcher/shared';
import { createBatcher, type CfsApi } from '@cfs-batcher/batcher';
import { harnessLifecycle, count, fastOptions, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

describe('any CFS answer during rebuild or a cycle is logged and retried, never a crash', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['404', { type: 'status', status: 404 }, /^Unexpected response from CFS: 404/],
    ['null body', { type: 'status', status: 200, body: 'null' }, /^Unexpected response from CFS/],
    ['invalid JSON', { type: 'invalid-json' }, /^Non-JSON response from CFS/],
    ['503', { type: 'status', status: 503 }, /^Unexpected response from CFS: 503/],
    ['timeout', { type: 'latency', ms: 3000 }, /^Unable to connect to CFS/],
  ];

  it.each(cases)('GET /v3/sessions answers %s during rebuild', async (_label, action, line) => {
    h = await startHarness({ clientOptions: { requestTimeoutMs: 300 }, seed: (sim) => putConfig(sim) });
    const rule = h.sim.faults.add({ match: 'GET /v3/sessions', action: action as never });
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('error');
    expect(h.batcher.state.rebuilt).toBe(false);
    expect(logs.lines.some((l) => line.test(l.message) && l.level === 'ERROR')).toBe(true);
    h.sim.faults.remove(rule);
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
    expect(h.batcher.state.rebuilt).toBe(true);
    expect(logs.has('Rebuilt previous state.  Found 0 incomplete sessions/batches.', 'INFO')).toBe(true);
  });

  it.each(cases)('GET /v3/components answers %s during a cycle', async (_label, action, line) => {
    h = await startHarness({
      clientOptions: { requestTimeoutMs: 300 },
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
      },
    });
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
    // New work: the full listing (a refused lean one would be retried in full within the cycle, collect-lean.test.ts)
    putComponents(h.sim, ['x1']);
    h.sim.faults.add({ match: 'GET /v3/components', action: action as never, scope: { times: 1 } });
    h.clock.advance(1);
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('error');
    expect(logs.lines.some((l) => line.test(l.message) && l.logger === 'batcher.cfs.components')).toBe(true);
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
  });

  it('run() waits with exponential backoff in phase waiting_for_cfs, stamping the heartbeat; no tight loop', async () => {
    const phases: Phase[] = [];
    const sleeps: number[] = [];
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    h.sim.faults.add({ match: 'GET /v3/sessions', action: { type: 'status', status: 503 } });
    const ac = new AbortController();
    const b = createBatcher({
      client: h.client,
      clock: h.clock,
      random: () => 0.9,
      sleep: async (ms) => {
        sleeps.push(ms);
        phases.push(b.heartbeat.currentPhase);
        h.clock.advance(ms);
        if (sleeps.length >= 40) ac.abort();
      },
    });
    await b.run(ac.signal);
    const requests = count(h.sim, 'GET /v3/sessions');
    const waited = sleeps.reduce((a, x) => a + x, 0);
    // ~1 request per wait, waits double from 1 s up to one check interval (10 s): far from the original's
    // hundreds per second, and never longer than a cycle, so work resumes within one cycle of CFS returning
    expect(requests).toBeLessThan(25);
    expect(waited / requests).toBeGreaterThan(5000);
    const waits = waitLengths(sleeps);
    expect(Math.max(...waits)).toBeLessThanOrEqual(10_000);
    expect(waits.slice(0, 4)).toEqual([1000, 2000, 4000, 8000].map((ms) => Math.round(ms * (0.5 + 0.9 / 2))));
    expect(phases.every((p) => p === 'waiting_for_cfs')).toBe(true);
    expect(Math.max(...sleeps)).toBeLessThanOrEqual(1000); // stamped at least every second
    expect(logs.has('Waiting for CFS to become available', 'INFO')).toBe(true);
    expect(logs.has('Rebuilding state was interrupted. Trying again...', 'WARNING')).toBe(true);
    expect(b.heartbeat.currentPhase).toBe('stopping');
  });
});

/** Joins the 1 s stamping steps back into whole waits (with random() = 0.9 no wait is a whole number of steps). */
function waitLengths(sleeps: number[]): number[] {
  const out: number[] = [];
  let cur = 0;
  for (const ms of sleeps) {
    cur += ms;
    if (ms < 1000) {
      out.push(cur);
      cur = 0;
    }
  }
  return out;
}

describe('fatal conditions', () => {
  it('a bug inside a cycle is logged with its stack and rethrown (main exits non-zero)', async () => {
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    const broken = Object.create(h.client) as CfsApi;
    broken.getOptions = async () => {
      throw new TypeError('boom');
    };
    const b = createBatcher({ client: broken, clock: h.clock, sleep: async () => undefined });
    await expect(b.runCycle()).rejects.toThrow('boom');
    const line = logs.lines.find((l) => l.message === 'Unexpected error occurred');
    expect(line?.level).toBe('ERROR');
    expect(String(line?.stack)).toContain('TypeError: boom');
    await expect(b.run(new AbortController().signal)).rejects.toThrow('boom');
  });
});
