/**
 * A turn taken inside a long pass is the loop's own work, so it stamps the heartbeat (throttled): a phase working
 * through a large site with no CFS answer for many seconds is not mistaken for a hang. Only the loop stamps: a
 * phase stuck in an await that never ends takes no turn and writes nothing, however far the clock moves.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { createBatcher, DEFAULT_TUNING, type Batcher, type PhaseContext, type PhaseSteps } from '@cfs-batcher/batcher';
import { makeTempDir } from '../helpers/tmp';
import { FakeClock } from './harness';

const tmp = makeTempDir('turn-stamps');
afterAll(() => tmp.cleanup());
let files = 0;

setLogSilent(true);

/** Fake seconds the pass runs, one per step: well past the sidecar's 14 s heartbeat limit. */
const PASS_SECONDS = 30;
/** Turns allowed for one stamp to land, at most: a bound, so a pass that never stamps ends (and the test fails). */
const TURNS_PER_STAMP = 1000;

const noopClient = new Proxy({} as never, {
  get: () => () => Promise.reject(new Error('this test makes no CFS call')),
});

function phasesWith(run: (ctx: PhaseContext) => Promise<void>): PhaseSteps {
  return {
    rebuild: { name: 'rebuild', span: 'test.rebuild', run: async (ctx) => void (ctx.state.rebuilt = true) },
    cycle: [{ name: 'check_status', span: 'test.check_status', run }],
  };
}

function build(phases: PhaseSteps, clock: FakeClock, heartbeatPath: string): Batcher {
  return createBatcher({
    client: noopClient,
    heartbeatPath,
    clock,
    sleep: async () => undefined,
    // The shipped tuning: turns after 8 ms of work (shared turns.ts), the progress stamp throttled to 1/s.
    tuning: { ...DEFAULT_TUNING },
    phases,
  });
}

it('a long bounded pass with no CFS answer keeps the heartbeat fresh, in its phase, with the shipped slice', async () => {
  const clock = new FakeClock();
  const stampsAt: number[] = [];
  const pass = async (ctx: PhaseContext): Promise<void> => {
    const heartbeat = b.heartbeat;
    const turns = ctx.turns();
    stampsAt.push(clock.now());
    // Each step is one fake second of work, taken in slices with turns between, as collect or check_status take them.
    for (let step = 0; step < PASS_SECONDS; step++) {
      clock.advance(1000);
      const before = heartbeat.lastSequence;
      for (let n = 0; n < TURNS_PER_STAMP && heartbeat.lastSequence === before;) {
        if (turns.due()) {
          await turns.take();
          n++;
        }
      }
      if (heartbeat.lastSequence === before) return; // no stamp for this step: the test fails below
      stampsAt.push(clock.now());
    }
  };
  const b = build(phasesWith(pass), clock, path.join(tmp.dir, `heartbeat-${++files}.json`));
  const r = await b.runCycle();
  expect(r.outcome).toBe('ok');
  // every fake second of the pass got its stamp: the largest gap is one step, far under the sidecar's limit
  expect(stampsAt).toHaveLength(PASS_SECONDS + 1);
  const gaps = stampsAt.slice(1).map((t, i) => t - stampsAt[i]!);
  expect(Math.max(...gaps)).toBe(1000);
});

it('a phase stuck in an await that never ends writes no heartbeat, however far the clock moves', async () => {
  const clock = new FakeClock();
  let release!: () => void;
  let entered!: () => void;
  const inPhase = new Promise<void>((resolve) => (entered = resolve));
  const stuck = async (): Promise<void> => {
    entered();
    await new Promise<void>((resolve) => (release = resolve));
  };
  const file = path.join(tmp.dir, `heartbeat-${++files}.json`);
  const b = build(phasesWith(stuck), clock, file);
  const cycle = b.runCycle();
  await inPhase;
  await b.heartbeat.stamp(); // the phase's own stamp has landed
  const seq = b.heartbeat.lastSequence;
  // Other work on the event loop (timers, I/O, requests) goes on for a minute of fake time: none of it stamps.
  for (let i = 0; i < 600; i++) {
    clock.advance(100);
    await nextTurn();
  }
  expect(b.heartbeat.lastSequence).toBe(seq);
  const hb = await readHeartbeat(file);
  expect(hb.ok && hb.heartbeat.sequence).toBe(seq);
  release();
  expect((await cycle).outcome).toBe('ok');
});
