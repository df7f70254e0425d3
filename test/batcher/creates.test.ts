/**
 * Session creates whose outcome is unknown, against the simulator's hostile faults. Each
 * test tries to get a component into two sessions (the operator is paused: every session stays active, so any
 * second session for a member is an overlap in the simulator's history).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CfsSession } from '@cfs-batcher/shared';
import { CreateIntentStore, createBatcher, heartbeatBody, type Batcher, type CfsApi } from '@cfs-batcher/batcher';
import { makeTempDir } from '../helpers/tmp';
import {
  harnessLifecycle,
  count,
  fastOptions,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);
const tmp = makeTempDir('intents');
const intentsFile = path.join(tmp.dir, 'create-intents.json');

beforeEach(() => {
  rmSync(intentsFile, { force: true });
  rmSync(`${intentsFile}.unusable`, { force: true });
});
afterAll(() => tmp.cleanup());

async function cycles(b: Batcher, n: number, stepMs = 1000): Promise<void> {
  for (let i = 0; i < n; i++) {
    h.clock.advance(stepMs);
    await b.runCycle();
  }
}

function noOverlap(): void {
  expect(h.sim.history.overlappingSessions()).toEqual([]);
}

function batcher(client: CfsApi = h.client, intents = new CreateIntentStore(undefined)): Batcher {
  return createBatcher({
    client,
    clock: h.clock,
    sleep: async () => undefined,
    intents,
    tuning: { createCommitHorizonMs: 60_000 },
  });
}

const seed = (ids: string[]) => (sim: Harness['sim']) => {
  putConfig(sim);
  fastOptions(sim);
  putComponents(sim, ids);
};

describe('lost answer after commit, and a lookup that lies', () => {
  it.each([
    ['reset', { type: 'reset' }],
    ['404 with a problem body', { type: 'status', status: 404, title: 'Not Found' }],
    ['404 with no body', { type: 'status', status: 404, body: 'empty' }],
    ['502', { type: 'status', status: 502 }],
    ['a 201 that is not a session ({})', { type: 'status', status: 201, body: {} }],
  ])(
    'POST answer lost (%s), GET by name 404s every time: adopted from the list, never a second session',
    async (_label, action) => {
      h = await startHarness({ seed: seed(['x1', 'x2', 'x3']) });
      h.sim.faults.add({ match: 'POST /v3/sessions', phase: 'after', action: action as never, scope: { times: 1 } });
      h.sim.faults.add({
        match: 'GET /v3/sessions/batcher-*',
        action: { type: 'status', status: 404, title: 'Session not found.' },
      });
      const b = batcher();
      await cycles(b, 6);
      expect(sessions(h.sim)).toHaveLength(1);
      expect(b.state.book.count('active')).toBe(1);
      expect(b.state.book.all()[0]!.sessionName).toBe(sessions(h.sim)[0]!.name);
      expect(logs.has(/exists from an earlier attempt; tracking it/, 'INFO')).toBe(true);
      noOverlap();
    },
  );

  it('lying GET and a list that does not show it yet: re-POST under the same name gets 409, adopted with its actual members', async () => {
    h = await startHarness({ seed: seed(['x1', 'x2', 'x3']) });
    h.sim.faults.add({ match: 'POST /v3/sessions', phase: 'after', action: { type: 'reset' }, scope: { times: 1 } });
    h.sim.faults.add({ match: 'GET /v3/sessions/batcher-*', action: { type: 'status', status: 404 } });
    let hiddenLists = 2;
    const hiding = Object.create(h.client) as CfsApi;
    hiding.listAllSessions = async (filter, o) => {
      const r = await h.client.listAllSessions(filter, o);
      if (filter.name_contains !== 'batcher-' && hiddenLists-- > 0)
        return { sessions: [] as CfsSession[], invalid: [] };
      return r;
    };
    const b = batcher(hiding);
    await cycles(b, 2); // batched, POSTed (reset)
    h.sim.state.components.get('x3')!.enabled = false; // x3 drops out of the batch meanwhile
    await cycles(b, 1); // GET 404, list hidden: re-POST the same name with x1,x2 -> 409 (it exists)
    expect(count(h.sim, 'POST /v3/sessions')).toBe(2);
    expect(b.state.book.count('uncertain')).toBe(1);
    await cycles(b, 3); // list shows it: adopted with its actual members x1,x2,x3
    expect(sessions(h.sim)).toHaveLength(1);
    const tracked = b.state.book.all().find((x) => x.sessionName !== null)!;
    expect([...tracked.members.keys()].sort()).toEqual(['x1', 'x2', 'x3']);
    noOverlap();
  });

  it('the session holds fewer members than the batch held (a re-POST of a subset committed): the others are free', async () => {
    h = await startHarness({ seed: seed(['x1', 'x2', 'x3']) });
    h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 1 } });
    const b = batcher();
    await cycles(b, 2); // POST x1,x2,x3 -> 503 before commit (the client cannot know)
    const name = b.state.book.all()[0]!.uncertainName!;
    h.sim.state.components.get('x3')!.enabled = false;
    h.sim.faults.add({ match: 'POST /v3/sessions', phase: 'after', action: { type: 'reset' }, scope: { times: 1 } });
    await cycles(b, 1); // re-POST x1,x2 under the same name: committed, answer lost
    h.sim.state.components.get('x3')!.enabled = true;
    await cycles(b, 3); // adopted with x1,x2 (its actual limit); x3 free and sent on its own
    expect(
      b.state.book
        .all()
        .find((x) => x.sessionName === name)
        ?.members.has('x3'),
    ).toBe(false);
    expect(
      sessions(h.sim)
        .map((s) => s.ansible.limit)
        .sort(),
    ).toEqual(['x1,x2', 'x3']);
    noOverlap();
  });

  it('nothing left to re-POST: the name is watched until the commit horizon, then retired (members free)', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 1 } });
    const b = batcher();
    await cycles(b, 2); // 503 before commit: nothing created, but the client cannot know
    h.sim.state.components.get('x1')!.enabled = false;
    await cycles(b, 5, 10_000);
    expect(b.state.book.count('uncertain')).toBe(1);
    expect(b.state.book.ownerOf('x1')).toBeDefined();
    await cycles(b, 2, 10_000); // past the 60 s horizon
    expect(b.state.book.size).toBe(0);
    expect(logs.has(/was not created \(none of its components is still pending\)/, 'INFO')).toBe(true);
    expect(sessions(h.sim)).toEqual([]);
  });
});

describe('late commit after the batcher died', () => {
  it("the restarted instance holds the dead one's intent; the commit lands 1.5 s after the kill; one session", async () => {
    h = await startHarness({ seed: seed(['x1', 'x2', 'x3', 'x4']) });
    h.sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'late-commit', ms: 1500, client: 'hang' },
      scope: { times: 1 },
    });
    const first = batcher(h.client, new CreateIntentStore(intentsFile));
    await cycles(first, 1);
    const ac = new AbortController();
    h.clock.advance(1000);
    const dying = first.runCycle(ac.signal);
    for (let i = 0; i < 200 && count(h.sim, 'POST /v3/sessions') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    ac.abort(); // "SIGKILL": the POST is in flight, the server will commit it later
    await dying.catch(() => undefined);
    const recorded = JSON.parse(readFileSync(intentsFile, 'utf8')) as {
      intents: { name: string; members: string[] }[];
    };
    expect(recorded.intents.map((i) => i.members.sort())).toEqual([['x1', 'x2', 'x3', 'x4']]);
    // The held POST, when it finally commits, finds the name taken (the simulator's name check answers true).
    const name = recorded.intents[0]!.name;
    let conflicts = 0;
    const has = h.sim.state.sessions.has.bind(h.sim.state.sessions);
    h.sim.state.sessions.has = (k: string) => {
      const taken = has(k);
      if (k === name && taken) conflicts++;
      return taken;
    };
    const second = batcher(h.client, new CreateIntentStore(intentsFile));
    await cycles(second, 1); // rebuilt before the commit: the intent becomes an uncertain batch, re-POSTed under its name
    expect(logs.has(/Found 1 session creates of a previous instance/, 'WARNING')).toBe(true);
    expect(sessions(h.sim).map((s) => s.name)).toEqual([name]);
    expect(conflicts).toBe(0); // the late commit has not landed yet
    for (let i = 0; i < 100 && conflicts === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(conflicts).toBe(1); // it landed on our session's name: 409, nothing created
    await cycles(second, 3);
    expect(sessions(h.sim).map((s) => s.name)).toEqual([name]);
    expect(second.state.book.count('active')).toBe(1);
    noOverlap();
  });

  it('a corrupt intents file: ERROR naming it, creates held back for the commit horizon, then resumed', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    writeFileSync(intentsFile, '{"format":1,"intents":[{"name":');
    const b = batcher(h.client, new CreateIntentStore(intentsFile));
    await cycles(b, 5, 10_000);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(0);
    expect(
      logs.lines.some((l) => l.level === 'ERROR' && l.message.includes(intentsFile) && /not JSON/.test(l.message)),
    ).toBe(true);
    // The heartbeat says why nothing is created, and the file is set aside so a restart cannot hold again forever.
    expect(heartbeatBody(b.state, h.clock.now(), h.clock.wallOffset).creating).toMatchObject({ state: 'uncertain' });
    expect(existsSync(intentsFile)).toBe(false);
    expect(existsSync(`${intentsFile}.unusable`)).toBe(true);
    await cycles(b, 3, 10_000);
    expect(sessions(h.sim)).toHaveLength(1);
  });

  it('an intents file that cannot be written: ERROR once, nothing POSTed until it can (a create not recorded could be duplicated)', async () => {
    h = await startHarness({ seed: seed(['x1']) });
    const dir = path.join(tmp.dir, 'not-yet');
    const b = batcher(h.client, new CreateIntentStore(path.join(dir, 'create-intents.json')));
    await cycles(b, 4);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(0);
    expect(
      logs.lines.filter((l) => l.level === 'ERROR' && /Unable to record session create intents/.test(l.message)),
    ).toHaveLength(1);
    mkdirSync(dir);
    await cycles(b, 1);
    expect(sessions(h.sim)).toHaveLength(1);
    expect(logs.has(/Create intents are recorded in .* again/, 'INFO')).toBe(true);
  });
});

describe("on CSM's defaults (check interval 10 s, batch window 60 s, batches of 25)", () => {
  it('an unwritable intents file holds every create; after a kill mid-POST the restart re-sends no batch CFS has', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `n${String(i).padStart(3, '0')}`);
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        putComponents(sim, ids);
      },
    });
    const dir = path.join(tmp.dir, 'volume-not-mounted-yet');
    const file = path.join(dir, 'create-intents.json');
    const instance = (): Batcher =>
      createBatcher({
        client: h.client,
        clock: h.clock,
        sleep: async () => undefined,
        intents: new CreateIntentStore(file),
      });
    const first = instance();
    await cycles(first, 9, 10_000); // 90 s: the full batch and the one past its window are both ready
    expect(count(h.sim, 'POST /v3/sessions')).toBe(0);
    expect(first.state.book.count('queued')).toBe(2);
    mkdirSync(dir);
    // The first POST's answer never comes; CFS commits it 1.5 s later, after the instance is gone.
    h.sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'late-commit', ms: 1500, client: 'hang' },
      scope: { times: 1 },
    });
    const ac = new AbortController();
    h.clock.advance(10_000);
    const dying = first.runCycle(ac.signal);
    for (let i = 0; i < 200 && count(h.sim, 'POST /v3/sessions') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    ac.abort(); // "SIGKILL" with the POST in flight
    await dying.catch(() => undefined);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    // Both names were recorded before any POST (one write for the chunk).
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as { intents: { name: string; members: string[] }[] };
    expect(recorded.intents.map((i) => i.members.length).sort((a, b) => a - b)).toEqual([5, 25]);
    for (let i = 0; i < 100 && h.sim.state.sessions.size === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(h.sim.state.sessions.size).toBe(1); // the lost POST committed
    const second = instance();
    await cycles(second, 7, 10_000);
    // The committed batch is adopted, never POSTed again; the other one is sent once, under its recorded name.
    expect(count(h.sim, 'POST /v3/sessions')).toBe(2);
    expect(
      sessions(h.sim)
        .map((s) => s.name)
        .sort(),
    ).toEqual(recorded.intents.map((i) => i.name).sort());
    const targeted = sessions(h.sim).flatMap((s) => String(s.ansible?.limit ?? '').split(','));
    expect(targeted.sort()).toEqual([...ids].sort());
    expect(second.state.book.count('active')).toBe(2);
    noOverlap();
  });
});
