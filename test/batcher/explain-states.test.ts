/**
 * GET /explain/{id} answered from the batcher's memory: each test drives the real batcher against the simulator
 * into one state (batch window open, pacing cap, back-off, uncertain create, refused and unanswered creates, the
 * create-intents hold, batcher_disable, session running, invalid record, comma id) and checks the answer, the
 * numbers its sentence names included. No CFS lookup is made for an id the memory holds.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CfsClient } from '@cfs-batcher/shared';
import { CreateIntentStore, createBatcher, type Batcher, type CfsApi } from '@cfs-batcher/batcher';
import { freePort } from '../helpers/ports';
import { makeTempDir } from '../helpers/tmp';
import { ask, cycles, drive, explainApp } from './explain-harness';
import {
  count,
  fastOptions,
  harnessLifecycle,
  ids,
  putComponents,
  putConfig,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
harnessLifecycle(() => h);
const tmp = makeTempDir('explain');
afterAll(() => tmp.cleanup());

/** "14:02:10 UTC" of a monotonic instant of the fake clock (its wall clock does not jump here). */
const hhmmss = (t: number): string => `${new Date(t).toISOString().slice(11, 19)} UTC`;

const LOOKUP = 'GET /v3/components/{component_id}';

/** Asks about `id` and checks that the memory answered (no CFS lookup). */
async function askMemory(id: string, b: Batcher = h.batcher) {
  const before = count(h.sim, LOOKUP);
  const a = await ask(explainApp(h, 4, b).app, id);
  expect(count(h.sim, LOOKUP)).toBe(before);
  expect(a.body.source).toBe('batcher');
  return a;
}

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
    `Waiting for batch compute-23.7 layers 0-2 (7 of 25); it is sent at ${hhmmss(b.windowStart + 60_000)} (in 60 s) when the 60 s window ends, or sooner if it fills.`,
  );
  expect(a.body.batch).toMatchObject({ configuration: 'compute-23.7', layers: '0,1,2', members: 7, batch_size: 25 });
  return a;
});

drive('held', 'pacing', 'pending-sessions cap reached: the pending count and the cap', async () => {
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
    /^Held: 1 batcher sessions pending in CFS \(cap 1\): the batcher waits for the operator/,
  );
  expect(a.body.hold).toMatchObject({ pacing: { limit: 'pending_cap', pending_sessions: 1, pending_cap: 1 } });
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

drive('not_batched', 'invalid_record', 'a record collect skips: the field that is wrong', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      sim.state.putConfiguration({
        name: 'nopb',
        layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: 'a'.repeat(40) }],
      });
      fastOptions(sim);
      sim.state.putComponent({ id: 'bad', desired_config: 'nopb', enabled: true, error_count: 0, state: [], tags: {} });
    },
  });
  await cycles(h, 1);
  const a = await askMemory('bad');
  expect(a.body.reason).toBe(
    'Not batched: its CFS record is unusable (desired_state[0] has no playbook); fix the record or its configuration in CFS and the next collect files it.',
  );
  return a;
});

drive('not_batched', 'bad_id', 'an id with a comma: no Ansible limit can carry it', async () => {
  const comma = 'x5002c0s0b0n0,x5002c0s1b0n0';
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, [comma]);
    },
  });
  await cycles(h, 1);
  const a = await askMemory(comma);
  expect(a.body.id).toBe(comma);
  expect(a.body.reason).toBe(
    'Not batched: the id contains a comma (it cannot be expressed in an Ansible limit), so no session can target it; rename the component in CFS.',
  );
  return a;
});
