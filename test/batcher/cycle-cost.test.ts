/**
 * Against the simulator: what a cycle costs CFS (paged lists instead of one GET per session, chunked ids= reads), and
 * that a session a list failed to show is confirmed by one GET rather than released.
 */
import type { CfsSession } from '@cfs-batcher/shared';
import { createBatcher, type CfsApi } from '@cfs-batcher/batcher';
import {
  harnessLifecycle,
  count,
  fastOptions,
  ids,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
harnessLifecycle(() => h);

describe('per-cycle cost', () => {
  it('follows active sessions with two paged lists, not one GET per session', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 1 });
        putComponents(sim, ids('x', 5));
      },
    });
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(5);
    h.sim.operator.step(); // all running
    h.sim.stats.reset();
    await h.batcher.runCycle();
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBe(0);
    expect(count(h.sim, 'GET /v3/sessions')).toBe(2);
    expect(h.sim.stats.snapshot().total).toBe(4); // options, 2 session lists, 1 component page
  });

  it('finished sessions are found by one complete-list and their members read with one ids= query', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 1 });
        putComponents(sim, ids('x', 5));
      },
    });
    await h.batcher.runCycle();
    h.sim.operator.runToCompletion();
    h.sim.stats.reset();
    await h.batcher.runCycle();
    expect(h.batcher.state.book.size).toBe(0);
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBe(0);
    expect(count(h.sim, 'GET /v3/sessions')).toBe(3); // pending, running, complete (max_age-bounded)
    expect(count(h.sim, 'GET /v3/components')).toBe(2); // one ids= read for all 5 batches + the collect page
  });

  it('does not release a session that a list failed to show: one GET confirms it', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1']);
      },
    });
    const hidden = Object.create(h.client) as CfsApi;
    hidden.listSessions = async function* (filter, o) {
      for await (const page of h.client.listSessions(filter, o)) yield { ...page, sessions: [] as CfsSession[] };
    };
    const b = createBatcher({ client: hidden, clock: h.clock, sleep: async () => undefined });
    await b.runCycle();
    h.clock.advance(1);
    await b.runCycle();
    await b.runCycle();
    expect(b.state.book.count('active')).toBe(1);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBe(1);
  });

  it('keeps ids= queries within URL limits (the client chunks them)', async () => {
    const many = ids('x9000c1s0b0n', 400);
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 400 });
        putComponents(sim, many);
      },
    });
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    h.sim.operator.runToCompletion();
    h.sim.stats.reset();
    await h.batcher.runCycle();
    expect(count(h.sim, 'GET /v3/components')).toBeGreaterThanOrEqual(3); // collect + >= 2 ids= chunks
    expect(h.batcher.state.book.size).toBe(0);
  });
});
