/**
 * Session creation stopped as the original batcher stopped it: the back-off after 20 failed sessions, and
 * batcher_disable. Against the simulator with the real client and a fake clock.
 */
import {
  harnessLifecycle,
  count,
  ids,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  fastOptions,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

describe('backoff and batcher_disable', () => {
  it('halts creation after 20 failed sessions, 60 s doubling, and one success resets it', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        fastOptions(sim, { batch_size: 1, default_batcher_retry_policy: 10 });
        putComponents(sim, ids('n', 20));
        sim.operator.addSessionMode({ mode: 'clone_failure' });
      },
    });
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(20);
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle(); // 20 failures: halt; the re-collected batches are not sent
    expect(
      logs.has(
        'The 20 most recent configuration sessions have failed. Halting session creation for 60 seconds',
        'WARNING',
      ),
    ).toBe(true);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(20);
    h.clock.advance(30_000);
    await h.batcher.runCycle();
    expect(count(h.sim, 'POST /v3/sessions')).toBe(20);
    h.clock.advance(30_000);
    await h.batcher.runCycle(); // halt over: send again (all still fail)
    expect(count(h.sim, 'POST /v3/sessions')).toBe(40);
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    expect(logs.has(/Halting session creation for 120 seconds/)).toBe(true);
    expect((await h.batcher.metrics.backoffSeconds.get()).values[0]!.value).toBe(120);
    h.clock.advance(120_000);
    h.sim.operator.clearOutcomes();
    await h.batcher.runCycle();
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    expect(logs.has('A session has succeeded.  Resuming normal operations', 'INFO')).toBe(true);
    expect((await h.batcher.metrics.backoffSeconds.get()).values[0]!.value).toBe(0);
    expect(h.batcher.state.backoff.currentS).toBe(0);
  });

  it('batcher_disable: monitors and finishes sessions but creates none', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        fastOptions(sim);
        putComponents(sim, ['x1']);
        sim.operator.setComponentOutcome('x1', 'skip');
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    h.sim.state.options = { ...h.sim.state.options, batcher_disable: true };
    putComponents(h.sim, ['x2']);
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    expect(h.sim.state.components.get('x1')!.state![0]!.status).toBe('skipped'); // completion still handled
    // A full collect, then a lean one with x1 read again by id before its POST, and 1 ids= read at completion
    expect(count(h.sim, 'GET /v3/components')).toBe(4);
  });
});
