/**
 * GET /explain/{id} answered from the batcher's memory for a filed batch the batcher's own sending rules keep back:
 * each test drives the real batcher against the simulator into one state (batch window open, pacing cap, back-off,
 * batcher_disable, the per-phase send limit) and checks the answer, the numbers its sentence names included. No
 * CFS lookup is made for an id the memory holds.
 */
import { cycles, drive, hhmmss, memoryAsker } from './explain-harness';
import { fastOptions, harnessLifecycle, ids, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);
const askMemory = memoryAsker(() => h);

drive('waiting_for_batch', null, 'batch window open: members so far, batch size, when the window ends', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim, 'compute-23.7', 3);
      sim.state.options = { ...sim.state.options, batch_window: 60, batch_size: 25 };
      putComponents(sim, ids('x', 7), { desired_config: 'compute-23.7' });
    },
  });
  await cycles(h, 1);
  const b = h.batcher.state.book.ownerOf('x000')!;
  const a = await askMemory('x000');
  expect(a.body.reason).toBe(
    `Waiting for batch compute-23.7 layers 0-2 (l0, l1, l2), 7 of 25 members; it is sent at ${hhmmss(b.windowStart + 60_000)} (in 60 s) when the 60 s window ends, or sooner if it fills.`,
  );
  expect(a.body.batch).toMatchObject({ configuration: 'compute-23.7', layers: '0,1,2', members: 7, batch_size: 25 });
  return a;
});

drive('held', 'pacing', 'pending-sessions allowance reached: the pending count, the allowance and why', async () => {
  h = await startHarness({
    deps: { tuning: { pendingSessionsCap: 1 } },
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_size: 2 });
      putComponents(sim, ids('x', 4));
    },
  });
  await cycles(h, 3);
  expect(h.sim.state.sessions.size).toBe(1);
  const waiting = ids('x', 4).find((id) => h.batcher.state.book.ownerOf(id)?.sessionName === null)!;
  const a = await askMemory(waiting);
  expect(a.body.reason).toMatch(
    /^Held: 1 batcher sessions pending in CFS reach the allowance of 1 \(its ceiling, BATCHER_PENDING_SESSIONS_CAP\): the batcher waits for the operator/,
  );
  expect(a.body.hold).toMatchObject({
    pacing: { limit: 'pending_cap', pending_sessions: 1, pending_cap: 1, pending_ceiling: 1, allowance_why: 'start' },
  });
  return a;
});

drive('held', 'backoff', 'the 20 most recent sessions failed: the halt and when it ends', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_size: 1 });
      putComponents(sim, ids('x', 20));
      sim.operator.addSessionMode({ mode: 'clone_failure' });
    },
  });
  await cycles(h, 2);
  expect(h.sim.state.sessions.size).toBe(20);
  h.sim.operator.runToCompletion();
  await cycles(h, 1); // 20 failures: halted 60 s; the components are pending again and filed anew
  const until = h.batcher.state.backoff.startMs + 60_000;
  const a = await askMemory('x000');
  expect(a.body.reason).toBe(
    `Held: the 20 most recent sessions failed, so session creation is halted for 60 s; the next attempt is at ${hhmmss(until)} (in 60 s).`,
  );
  expect(a.body.hold).toMatchObject({ backoff_s: 60, next_attempt_at: new Date(until).toISOString() });
  return a;
});

drive('held', 'batcher_disable', 'batcher_disable set after the batch was filed', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_window: 600 });
      putComponents(sim, ['x1']);
    },
  });
  await cycles(h, 1);
  h.sim.state.options = { ...h.sim.state.options, batcher_disable: true };
  await cycles(h, 1);
  const a = await askMemory('x1');
  expect(a.body.reason).toBe(
    'Held: batcher_disable is true in the CFS options, so no session is created until it is set back to false.',
  );
  return a;
});

drive('held', 'next_send', 'ready, and only the per-phase send limit kept it for the next cycle', async () => {
  h = await startHarness({
    deps: { tuning: { sendMaxPerPhase: 1 } },
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_size: 1 });
      putComponents(sim, ['x1', 'x2']);
    },
  });
  await cycles(h, 1); // both batches are full at once: one is sent, the other waits for the next send phase
  expect(h.sim.state.sessions.size).toBe(1);
  const left = ['x1', 'x2'].find((id) => h.batcher.state.book.ownerOf(id)?.sessionName === null)!;
  const a = await askMemory(left);
  expect(a.body.reason).toMatch(
    /^Held: the batch is full and goes out in the next send phase; the next attempt is at /,
  );
  return a;
});
