/**
 * GET /explain/{id} while CFS fails the batcher's cycles: a batch that is ready waits for CFS, not for "the next send
 * phase", and the answer says which call failed and when.
 */
import { ask, cycles, drive, explainApp } from './explain-harness';
import { fastOptions, harnessLifecycle, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);

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
