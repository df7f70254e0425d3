/**
 * Only the loop stamps the heartbeat: a phase stuck in an await that never ends writes nothing, however far the
 * clock moves and whatever else runs on the event loop.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { createBatcher, DEFAULT_TUNING, type Batcher, type PhaseContext, type PhaseSteps } from '@cfs-batcher/batcher';
import { makeTempDir } from '../helpers/tmp';
import { FakeClock } from './harness';

const tmp = makeTempDir('stuck-phase');
afterAll(() => tmp.cleanup());
let files = 0;

setLogSilent(true);

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
    tuning: { ...DEFAULT_TUNING },
    phases,
  });
}

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
