/**
 * Time and pacing in the loop: options freshness while sleeping, the batcher_disable toggle,
 * monotonic timers under a wall-clock jump, the pending-sessions and creates-per-minute caps.
 */
import { createBatcher, heartbeatBody, monotonicClock, isBackingOff, RECENT_SESSIONS_SIZE } from '@cfs-batcher/batcher';
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
const logs = harnessLifecycle(() => h);

const hb = () => heartbeatBody(h.batcher.state, h.clock.now(), h.clock.wallOffset);
const halted = (now: number) => ({
  recent: Array<boolean>(RECENT_SESSIONS_SIZE).fill(false),
  currentS: 60,
  startMs: now,
});

it('batcher_check_interval 100000 corrected to 10 takes effect within 10 s of (fake) time', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batcher_check_interval: 100_000 });
    },
  });
  const ac = new AbortController();
  let sleepStart: number | null = null;
  let secondCycleAt: number | null = null;
  let steps = 0;
  const b = createBatcher({
    client: h.client,
    clock: h.clock,
    sleep: async (ms) => {
      expect(ms).toBeLessThanOrEqual(1000); // every sleep step is <= 1 s (a beat after each)
      if (sleepStart === null) {
        sleepStart = h.clock.now();
        h.sim.state.options = { ...h.sim.state.options, batcher_check_interval: 10 };
      }
      h.clock.advance(ms);
      if (b.state.cycles >= 2 && secondCycleAt === null) secondCycleAt = h.clock.now();
      if (secondCycleAt !== null || ++steps > 500) ac.abort();
    },
  });
  await b.run(ac.signal);
  expect(b.state.options.batcher_check_interval).toBe(10);
  expect(secondCycleAt! - sleepStart!).toBeLessThanOrEqual(10_000 + 1000);
  expect(logs.has('batcher_check_interval changed from 100000 to 10; ending the sleep early', 'INFO')).toBe(true);
  // one options read while sleeping (at 10 s), one per cycle
  expect(count(h.sim, 'GET /v3/options')).toBe(3);
});

it('a long sleep re-reads the options at most every 10 s and ends early when batcher_disable changes', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batcher_check_interval: 60 });
    },
  });
  const ac = new AbortController();
  let steps = 0;
  const b = createBatcher({
    client: h.client,
    clock: h.clock,
    sleep: async (ms) => {
      h.clock.advance(ms);
      steps += 1;
      if (steps === 25) h.sim.state.options = { ...h.sim.state.options, batcher_disable: true };
      if (b.state.cycles >= 2 || steps > 200) ac.abort();
    },
  });
  await b.run(ac.signal);
  expect(b.state.options.batcher_disable).toBe(true);
  // reads at 10 s, 20 s (nothing changed) and 30 s (disabled): the second cycle starts at 30 s of a 60 s sleep
  // (the 31st step is the first of the second cycle's sleep)
  expect(steps).toBe(31);
  expect(count(h.sim, 'GET /v3/options')).toBe(2 + 3);
});

it('toggling batcher_disable on and off resets the create backoff (logged), and sending resumes at once', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1']);
    },
  });
  h.batcher.state.backoff = halted(h.clock.now());
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(0);
  expect(hb().creating).toMatchObject({ state: 'backoff' });
  h.sim.state.options = { ...h.sim.state.options, batcher_disable: true };
  await h.batcher.runCycle();
  expect(hb().creating).toMatchObject({ state: 'disabled', next_attempt_ms: null });
  expect(isBackingOff(h.batcher.state.backoff, h.clock.now())).toBe(true);
  h.sim.state.options = { ...h.sim.state.options, batcher_disable: false };
  h.clock.advance(10_000);
  await h.batcher.runCycle();
  expect(isBackingOff(h.batcher.state.backoff, h.clock.now())).toBe(false);
  expect(logs.has('batcher_disable was turned off: session creation backoff reset', 'INFO')).toBe(true);
  expect(sessions(h.sim)).toHaveLength(1);
});

it('a ±1 hour wall-clock jump causes no early send, no pending-timeout deletion and no backoff change', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_window: 60, batcher_pending_timeout: 300 });
      putComponents(sim, ids('x', 3));
    },
  });
  await h.batcher.runCycle();
  for (const jump of [3_600_000, -3_600_000]) {
    h.clock.wallOffset = jump;
    h.clock.advance(10_000);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(0); // the 60 s window is measured on the monotonic clock
    // reported times are wall-clock: the sidecar compares them with its own (jumped) clock
    expect(hb().last_cycle!.completed_at_ms).toBe(h.clock.wall());
  }
  h.clock.wallOffset = 0;
  h.clock.advance(50_000);
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(1); // 70 s of monotonic time: sent, once
  for (const jump of [3_600_000, -3_600_000]) {
    h.clock.wallOffset = jump;
    h.clock.advance(10_000);
    await h.batcher.runCycle();
  }
  expect(count(h.sim, 'DELETE /v3/sessions/{session_name}')).toBe(0); // still pending, 20 s old: not deleted
  const start = h.clock.now();
  h.batcher.state.backoff = halted(start);
  h.clock.wallOffset = 3_600_000;
  h.clock.advance(30_000);
  expect(isBackingOff(h.batcher.state.backoff, h.clock.now())).toBe(true);
  expect(hb().backoff).toMatchObject({ active: true, until_ms: start + 60_000 + 3_600_000 });
  h.clock.wallOffset = -3_600_000;
  h.clock.advance(31_000);
  expect(isBackingOff(h.batcher.state.backoff, h.clock.now())).toBe(false);
});

it('the production clock is monotonic: a wall-clock jump moves wall() only', () => {
  const clock = monotonicClock();
  const before = clock.now();
  const real = Date.now();
  jest.spyOn(Date, 'now').mockReturnValue(real + 3_600_000);
  expect(clock.wall!()).toBe(real + 3_600_000);
  expect(clock.now() - before).toBeLessThan(1000);
  jest.spyOn(Date, 'now').mockReturnValue(real - 3_600_000);
  expect(clock.now()).toBeGreaterThanOrEqual(before);
});

it('pacing: no create while the pending-sessions allowance (here its ceiling) is reached; reported in the heartbeat and metrics; nothing lost', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_size: 1 });
      putComponents(sim, ids('x', 10));
    },
    deps: { tuning: { pendingSessionsCap: 3, createsPerMinuteCap: 0 } },
  });
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(3);
  expect(hb()).toMatchObject({
    creating: { state: 'paced' },
    pacing: { pending_sessions: 3, pending_cap: 3, creates_per_minute_cap: 0 },
  });
  const why = '3 batcher sessions pending in CFS reach the allowance of 3 (its ceiling, BATCHER_PENDING_SESSIONS_CAP)';
  expect(hb().creating!.reason).toBe(why);
  expect(hb().pacing!.allowance).toMatchObject({ why: 'start', ceiling: 3 });
  expect(logs.has(`Pacing session creation: ${why}`, 'INFO')).toBe(true);
  h.clock.advance(10_000);
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(3); // CFS still lists them pending
  const metrics = await h.batcher.metrics.registry.metrics();
  expect(metrics).toContain('cfs_batcher_pending_sessions 3');
  expect(metrics).toContain('cfs_batcher_pacing_limited 1');
  expect(metrics).toContain('cfs_batcher_pacing_allowance 3');
  h.sim.operator.step(); // the operator starts them: pending -> running
  h.clock.advance(10_000);
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(6);
  // every component is in one session or still queued: none lost, none doubled
  for (const id of ids('x', 10)) expect(h.batcher.state.book.ownerOf(id)).toBeDefined();
  expect(h.sim.history.overlappingSessions()).toEqual([]);
});

it('pacing: creates per minute are capped over any 60 s', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_size: 1 });
      putComponents(sim, ids('x', 10));
    },
    deps: { tuning: { pendingSessionsCap: 0, createsPerMinuteCap: 4 } },
  });
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(4);
  h.clock.advance(30_000);
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(4);
  expect(hb().creating).toMatchObject({ state: 'paced', next_attempt_ms: h.clock.wall() + 30_000 });
  h.clock.advance(30_000);
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(8);
  expect(h.sim.history.overlappingSessions()).toEqual([]);
});
