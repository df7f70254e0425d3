/**
 * GET /explain/{id} while another batcher creates sessions in the same CFS: the simulator's scripted original
 * (cfs-sim/src/foreign-batcher.ts) creates a session, this batcher stands down. A node in the other batcher's session
 * is held by that session (named); a node this batcher collected meanwhile is held by the stand-down.
 */
import { cycles, drive, memoryAsker } from './explain-harness';
import {
  fastOptions,
  harnessLifecycle,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
harnessLifecycle(() => h);
const askMemory = memoryAsker(() => h);

/** Rebuilt with nothing to adopt, then the other batcher's session for x1 and x2 appears, and one cycle sees it. */
async function standingDown(): Promise<string> {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
    },
  });
  await cycles(h, 1);
  putComponents(h.sim, ['x1', 'x2']);
  h.sim.foreign.configure({ batchSize: 2, windowMs: 0 });
  h.sim.foreign.cycle();
  const [theirs] = h.sim.foreign.created;
  await cycles(h, 1);
  expect(h.batcher.state.foreign.standingDown).not.toBeNull();
  return theirs!;
}

drive('held', 'foreign_session', "a node in another batcher's active session: that session is named", async () => {
  const theirs = await standingDown();
  const a = await askMemory('x1');
  expect(a.body.reason).toContain(`in another batcher's active session ${theirs}`);
  expect(a.body.hold).toMatchObject({ session_name: theirs });
  // Never put into a session of this batcher.
  expect(sessions(h.sim).map((s) => s.name)).toEqual([theirs]);
  return a;
});

drive('held', 'foreign_batcher', 'a node collected while standing down: held, naming the other batcher', async () => {
  const theirs = await standingDown();
  putComponents(h.sim, ['x3']);
  await cycles(h, 2);
  const a = await askMemory('x3');
  expect(a.body.reason).toContain('another batcher is creating sessions in this CFS');
  expect(a.body.reason).toContain(theirs);
  expect(a.body.hold).toMatchObject({ foreign_sessions: [theirs] });
  expect(sessions(h.sim)).toHaveLength(1);
  return a;
});
