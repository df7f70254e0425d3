/**
 * GET /explain/{id} answered from the batcher's memory for a batch held by how its session create went: each test
 * drives the real batcher against the simulator into one hold (uncertain create, refused and unanswered creates,
 * the create-intents hold) and checks the answer, the numbers its sentence names included. No CFS lookup is made
 * for an id the memory holds.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CfsClient } from '@cfs-batcher/shared';
import { CreateIntentStore, createBatcher, type CfsApi } from '@cfs-batcher/batcher';
import { freePort } from '../helpers/ports';
import { makeTempDir } from '../helpers/tmp';
import { cycles, drive, hhmmss, memoryAsker } from './explain-harness';
import { fastOptions, harnessLifecycle, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);
const askMemory = memoryAsker(() => h);
const tmp = makeTempDir('explain');
afterAll(() => tmp.cleanup());

drive('held', 'uncertain_create', 'a create with no clear answer: the session name and the horizon', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1', 'x2', 'x3']);
    },
  });
  h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 1 } });
  await cycles(h, 2);
  const b = h.batcher.state.book.ownerOf('x2')!;
  const a = await askMemory('x2');
  expect(a.body.reason).toContain(`the create of session ${b.uncertainName} (3 components) got no clear answer`);
  expect(a.body.reason).toContain(`gives the name up at ${hhmmss(b.horizonAt)}`);
  expect(a.body.hold).toMatchObject({ session_name: b.uncertainName });
  return a;
});

drive('held', 'create_retry', 'CFS refused this batch (400): failures and the retry time', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1']);
    },
  });
  h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 400 }, scope: { times: 1 } });
  await cycles(h, 2);
  const b = h.batcher.state.book.ownerOf('x1')!;
  const a = await askMemory('x1');
  expect(a.body.reason).toBe(
    `Held: CFS refused this batch's session create (1 failed create); it waits its retry delay; the next attempt is at ${hhmmss(b.nextAttemptAt)} (in 30 s).`,
  );
  return a;
});

drive('held', 'cfs_refusing', 'CFS refuses creates (403): the answer, how often, the next attempt', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1']);
    },
  });
  h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 403 } });
  await cycles(h, 2);
  const a = await askMemory('x1');
  expect(a.body.reason).toMatch(
    /^Held: CFS is refusing session creates \(POST \/v3\/sessions answered 403, 1 time since /,
  );
  expect(a.body.reason).toContain('this batch waits after 1 failed create');
  return a;
});

drive('held', 'cfs_timeout', 'CFS does not answer creates (connection refused)', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1']);
    },
  });
  const dead = new CfsClient({ baseUrl: `http://127.0.0.1:${await freePort()}/v3`, retryBudgetMs: 0 });
  const client = Object.create(h.client) as CfsApi;
  client.createSession = (body, o) => dead.createSession(body, o);
  const b = createBatcher({ client, clock: h.clock, sleep: async () => undefined });
  await cycles(h, 2, b);
  const a = await askMemory('x1', b);
  expect(a.body.reason).toMatch(
    /^Held: CFS is not answering session creates \(POST \/v3\/sessions failed \(unreachable\)/,
  );
  return a;
});

drive(
  'held',
  'intents_unreadable',
  'an unusable create-intents file at start: creates held until the horizon',
  async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1']);
      },
    });
    const file = path.join(tmp.dir, 'create-intents.json');
    writeFileSync(file, 'not json');
    const b = createBatcher({
      client: h.client,
      clock: h.clock,
      sleep: async () => undefined,
      intents: new CreateIntentStore(file),
    });
    await cycles(h, 3, b);
    const a = await askMemory('x1', b);
    expect(a.body.reason).toContain('the create-intents file was unusable at start-up');
    expect(a.body.reason).toContain(`the next attempt is at ${hhmmss(b.state.intents.heldUntil)}`);
    return a;
  },
);
