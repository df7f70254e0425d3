/**
 * GET /explain/{id} answered from the batcher's memory for a component in a session the batcher follows: each test
 * drives the real batcher against the simulator into the session's state in CFS (running, still pending) and
 * checks the answer, the times its sentence names included. No CFS lookup is made for an id the memory holds.
 */
import { cycles, drive, hhmmss, memoryAsker } from './explain-harness';
import { fastOptions, harnessLifecycle, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);
const askMemory = memoryAsker(() => h);

drive('in_session', null, 'session running: its name, status in CFS, members', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1', 'x2']);
    },
  });
  await cycles(h, 2);
  h.sim.operator.step(); // running
  await cycles(h, 1);
  const b = h.batcher.state.book.ownerOf('x1')!;
  const a = await askMemory('x1');
  expect(a.body.reason).toBe(
    `In session ${b.sessionName} (2 components), running in CFS at ${hhmmss(b.sessionStatusAt)}, created ${hhmmss(b.sessionStart!)}; the batcher records the result when it ends.`,
  );
  expect(a.body.session).toMatchObject({ name: b.sessionName, status: 'running', members: 2 });
  return a;
});

drive('in_session', null, 'session still pending: when the pending timeout deletes it', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batcher_pending_timeout: 300 });
      putComponents(sim, ['x1']);
    },
  });
  await cycles(h, 3);
  const b = h.batcher.state.book.ownerOf('x1')!;
  const a = await askMemory('x1');
  expect(a.body.reason).toContain(
    `pending in CFS at ${hhmmss(b.sessionStatusAt)}, created ${hhmmss(b.sessionStart!)}; the batcher deletes it if it is still pending at ${hhmmss(b.sessionStart! + 300_000)}`,
  );
  expect(a.body.reason).toContain('(batcher_pending_timeout 300 s)');
  return a;
});
