/**
 * Sending while batches wait on pacing, with the options CSM runs (batcher_check_interval 10, batch_window 60): a
 * batch is POSTed only with records read since the cycle's collect and since the phase last waited for the
 * operator, so a member whose configuration changed meanwhile is never sent with the old one, a member configured by
 * someone else is not sent at all, and a restart while batches wait puts no component in two sessions.
 */
import path from 'node:path';
import { createBatcher, DEFAULT_OPTIONS, DEFAULT_TUNING, type Batcher } from '@cfs-batcher/batcher';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { makeTempDir } from '../helpers/tmp';
import { COMMIT_A } from './fixtures';
import { count, harnessLifecycle, putComponents, putConfig, sessions, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);

/** One pending component per configuration (c1: x1, c2: x2, ...): one batch each. */
function seed(n: number, extraOptions: Record<string, unknown> = {}) {
  return (sim: Simulator): void => {
    sim.state.options = { ...DEFAULT_OPTIONS, ...extraOptions };
    for (let i = 1; i <= n; i++) {
      putConfig(sim, `c${i}`, 1);
      putComponents(sim, [`x${i}`], { desired_config: `c${i}` });
    }
  };
}

/** The batcher's sleeps move the fake clock (a wait for the operator takes time) and run `onSleep` first. */
async function start(n: number, cap: number, onSleep: () => void = () => undefined): Promise<Harness> {
  const clock: { advance?: (ms: number) => void } = {};
  const harness = await startHarness({
    seed: seed(n),
    deps: {
      tuning: { pendingSessionsCap: cap, createsPerMinuteCap: 0 },
      sleep: async (ms) => {
        onSleep();
        clock.advance?.(ms);
      },
    },
  });
  clock.advance = (ms) => harness.clock.advance(ms);
  return harness;
}

/** Every (component, configuration limit) any session was created with. */
function sent(sim: Simulator): { id: string; limit: string }[] {
  return sim.history.all().flatMap((e) => e.hosts.map((id) => ({ id, limit: e.configuration_limit })));
}

/** Someone else configured it: its one layer applied, so it is no longer pending. */
function configuredElsewhere(sim: Simulator, id: string): void {
  const c = sim.state.components.get(id)!;
  const layer = { clone_url: 'https://vcs/l0.git', playbook: 'site.yml', commit: COMMIT_A, status: 'applied' };
  sim.state.putComponent({ ...c, state: [{ ...layer, session_name: 'someone-else', last_updated: 'now' }] });
}

const WINDOW_MS = DEFAULT_OPTIONS.batch_window * 1000;
const INTERVAL_MS = DEFAULT_OPTIONS.batcher_check_interval * 1000;

/** The invariants from the simulator alone: no component in two active sessions, every component in one. */
function expectEachOnce(sim: Simulator, expected: string[]): void {
  expect(sim.history.overlappingSessions()).toEqual([]);
  const members = sent(sim).map((s) => s.id);
  expect(members.sort()).toEqual([...expected].sort());
}

it('a batch waiting inside the phase is read again: a changed member moves, one configured elsewhere is not sent', async () => {
  let first = true;
  h = await start(3, 1, () => {
    if (!first) return;
    first = false;
    putConfig(h.sim, 'c2', 2); // x2 now has two pending layers: its batch key and configuration limit change
    configuredElsewhere(h.sim, 'x3');
    h.sim.operator.step(); // x1's session starts: room for one more create
  });
  expect((await h.batcher.runCycle()).outcome).toBe('ok');
  h.clock.advance(WINDOW_MS + 1);
  expect((await h.batcher.runCycle()).outcome).toBe('ok');
  expect(first).toBe(false); // the phase waited for the operator
  expect(sent(h.sim)).toEqual([{ id: 'x1', limit: '0' }]); // neither x2 with limit 0 nor x3
  expect(h.batcher.state.book.ownerOf('x2')?.key).toBe('c2:0,1:');
  expect(h.batcher.state.book.ownerOf('x3')).toBeUndefined();
  h.clock.advance(WINDOW_MS + 1);
  await h.batcher.runCycle();
  expect(sent(h.sim)).toEqual([
    { id: 'x1', limit: '0' },
    { id: 'x2', limit: '0,1' },
  ]);
  expectEachOnce(h.sim, ['x1', 'x2']);
});

it('a batch waiting on pacing across cycles is read again before its POST (lean listing showed no change)', async () => {
  h = await start(3, 1);
  await h.batcher.runCycle();
  h.clock.advance(WINDOW_MS + 1);
  await h.batcher.runCycle(); // x1 sent; the operator is paused: the phase gives up waiting after the stall time
  expect(sent(h.sim).map((s) => s.id)).toEqual(['x1']);
  expect(h.batcher.state.pacing.limited?.why).toBe('pending_cap');
  putConfig(h.sim, 'c2', 2); // not visible in a lean record (same configuration name)
  configuredElsewhere(h.sim, 'x3');
  h.sim.operator.step();
  h.clock.advance(INTERVAL_MS);
  const filters: unknown[] = [];
  const original = h.client.listComponents.bind(h.client);
  jest.spyOn(h.client, 'listComponents').mockImplementation((f, o) => {
    filters.push(f);
    return original(f, o);
  });
  await h.batcher.runCycle();
  // lean collect (x3 gone from it), then x2 read again by id in send, which moves it out of its ready batch
  expect(filters).toEqual([
    { enabled: true, status: 'pending', config_details: false, state_details: false },
    { enabled: true, status: 'pending', config_details: true, state_details: true, ids: ['x2'] },
  ]);
  expect(sent(h.sim)).toEqual([{ id: 'x1', limit: '0' }]);
  h.clock.advance(WINDOW_MS + 1);
  await h.batcher.runCycle();
  expect(sent(h.sim)).toEqual([
    { id: 'x1', limit: '0' },
    { id: 'x2', limit: '0,1' },
  ]);
  expectEachOnce(h.sim, ['x1', 'x2']);
});

it('a restart while batches wait on pacing: the new instance holds the created one and sends the rest once', async () => {
  const tmp = makeTempDir('send-pacing');
  try {
    const heartbeatPath = path.join(tmp.dir, 'heartbeat.json');
    h = await startHarness({
      seed: seed(3),
      deps: { heartbeatPath, tuning: { pendingSessionsCap: 1, createsPerMinuteCap: 0 } },
    });
    await h.batcher.runCycle();
    h.clock.advance(WINDOW_MS + 1);
    await h.batcher.runCycle();
    expect(sent(h.sim).map((s) => s.id)).toEqual(['x1']);
    // SIGKILL: the instance is gone; a new one starts on the same volume and CFS
    const next: Batcher = createBatcher({
      client: h.client,
      clock: h.clock,
      sleep: async () => undefined,
      heartbeatPath,
      tuning: { pendingSessionsCap: 1, createsPerMinuteCap: 0 },
    });
    for (let i = 0; i < 6; i++) {
      h.clock.advance(WINDOW_MS + 1);
      expect((await next.runCycle()).outcome).toBe('ok');
      expect(h.sim.history.summary().pendingPeak).toBeLessThanOrEqual(1);
      h.sim.operator.step();
    }
    expectEachOnce(h.sim, ['x1', 'x2', 'x3']);
  } finally {
    tmp.cleanup();
  }
});

it('goes on creating in the same phase as the operator starts sessions, never above the pending cap', async () => {
  h = await start(8, 2, () => h.sim.operator.step());
  await h.batcher.runCycle();
  h.clock.advance(WINDOW_MS + 1);
  const before = count(h.sim, 'GET /v3/sessions');
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(8);
  expect(h.sim.history.summary().pendingPeak).toBe(2);
  expect(h.batcher.state.pacing.limited).toBeNull();
  // One read of the pending sessions per wait: 3 waits for 8 creates at 2 at a time, after check_status's two lists
  // (pending, running: read every cycle, another batcher's sessions show there)
  expect(count(h.sim, 'GET /v3/sessions') - before).toBe(2 + 3);
  expectEachOnce(
    h.sim,
    Array.from({ length: 8 }, (_, i) => `x${i + 1}`),
  );
});

it('stops waiting when the operator starts nothing: bounded reads, the rest next cycle', async () => {
  h = await start(4, 2);
  await h.batcher.runCycle();
  h.clock.advance(WINDOW_MS + 1);
  const before = count(h.sim, 'GET /v3/sessions');
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(2);
  const { pacingPollMs, pacingStallMs } = DEFAULT_TUNING;
  // Besides check_status's two lists (pending, running), every list is a wait's poll
  expect(count(h.sim, 'GET /v3/sessions') - before).toBe(2 + Math.ceil(pacingStallMs / pacingPollMs));
  expect(h.batcher.state.pacing.limited?.why).toBe('pending_cap');
});
