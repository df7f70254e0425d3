/**
 * Against the simulator: a failing create is retried with backoff and its members re-validated; a create whose answer
 * was lost is looked up before it is sent again, so no duplicate session targets the nodes. Each was a defect of the
 * original batcher.
 */
import { CfsClient, CfsError } from '@cfs-batcher/shared';
import { createBatcher, type CfsApi } from '@cfs-batcher/batcher';
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

describe('a failing create is retried with backoff and re-validated', () => {
  it('400 invalid configuration: no re-POST every cycle; retried after 30 s, then 60 s', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1']);
      },
    });
    h.sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'status', status: 400, title: 'Invalid configuration' },
      scope: { times: 2 },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    for (let i = 0; i < 5; i++) {
      h.clock.advance(5000);
      await h.batcher.runCycle();
    }
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    h.clock.advance(5000);
    await h.batcher.runCycle();
    expect(count(h.sim, 'POST /v3/sessions')).toBe(2);
    h.clock.advance(59_000);
    await h.batcher.runCycle();
    expect(count(h.sim, 'POST /v3/sessions')).toBe(2);
    h.clock.advance(1001);
    await h.batcher.runCycle();
    expect(count(h.sim, 'POST /v3/sessions')).toBe(3);
    expect(sessions(h.sim)).toHaveLength(1);
    const failures = await h.batcher.metrics.sessionCreateFailures.get();
    expect(failures.values.find((v) => v.labels.reason === 'http_400')!.value).toBe(2);
  });

  it('components disabled or reconfigured since batching are not sent with stale data', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        putConfig(sim, 'cfg2', 1, 'c'.repeat(40));
        putComponents(sim, ['x1', 'x2', 'x3']);
      },
    });
    await h.batcher.runCycle(); // all three queued, window 60 s
    expect(sessions(h.sim)).toHaveLength(0);
    h.sim.state.components.get('x1')!.enabled = false;
    h.sim.state.components.get('x2')!.desired_config = 'cfg2';
    h.clock.advance(61_000);
    await h.batcher.runCycle();
    h.clock.advance(61_000);
    await h.batcher.runCycle();
    const sent = sessions(h.sim)
      .map((s) => [s.configuration.name, s.ansible.limit])
      .sort();
    expect(sent).toEqual([
      ['cfg', 'x3'],
      ['cfg2', 'x2'],
    ]);
  });
});

/** Wraps the real client so a POST reaches the server but the answer is lost (a read timeout). */
function losingFirstPost(client: CfsClient): CfsApi & { lost: number } {
  const wrapper = Object.create(client) as CfsApi & { lost: number };
  wrapper.lost = 0;
  wrapper.createSession = async (body, o) => {
    const s = await client.createSession(body, o);
    if (wrapper.lost === 0) {
      wrapper.lost += 1;
      throw new CfsError('timeout', 'timeout (ECONNABORTED) calling CFS POST', 'POST', 'u', '/v3/sessions');
    }
    return s;
  };
  return wrapper;
}

describe('a POST that timed out may have created the session: look it up before creating again', () => {
  it('adopts the session the lost POST created; no duplicate targets the nodes', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1', 'x2']);
      },
    });
    const client = losingFirstPost(h.client);
    const b = createBatcher({ client, clock: h.clock, sleep: async () => undefined });
    await b.runCycle();
    h.clock.advance(1);
    await b.runCycle();
    expect(client.lost).toBe(1);
    expect(sessions(h.sim)).toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      h.clock.advance(20_000);
      await b.runCycle();
    }
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBeGreaterThanOrEqual(1);
    expect(sessions(h.sim)).toHaveLength(1);
    expect(b.state.book.all().map((x) => x.sessionName)).toEqual([sessions(h.sim)[0]!.name]);
    expect(logs.has(/exists from an earlier attempt/)).toBe(true);
  });

  it('a 503 POST is looked up (404 is not proof), then re-POSTed under the SAME name: one session', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1']);
      },
    });
    h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 1 } });
    const names: string[] = [];
    const b = createBatcher({
      client: h.client,
      clock: h.clock,
      sleep: async () => undefined,
      newSessionName: () => {
        names.push(`batcher-n${names.length}`);
        return names.at(-1)!;
      },
    });
    await b.runCycle();
    h.clock.advance(1);
    await b.runCycle(); // POST -> 503: uncertain, x1 held under batcher-n0
    expect(b.state.book.count('uncertain')).toBe(1);
    h.clock.advance(1);
    await b.runCycle(); // GET 404, list: none; re-POST batcher-n0 with the member collect still saw pending
    expect(sessions(h.sim).map((s) => [s.name, s.ansible?.limit])).toEqual([['batcher-n0', 'x1']]);
    expect(names).toEqual(['batcher-n0']);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(2);
    expect(b.state.book.count('active')).toBe(1);
    expect(h.sim.history.overlappingSessions()).toEqual([]);
  });

  it('members changed while a create was uncertain are not sent with stale data, and the name is kept', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1', 'x2']);
      },
    });
    h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 1 } });
    const b = createBatcher({ client: h.client, clock: h.clock, sleep: async () => undefined });
    await b.runCycle(); // batched
    h.clock.advance(1);
    await b.runCycle(); // POST x1,x2 -> 503: uncertain, members held
    const name = b.state.book.all()[0]!.uncertainName;
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    h.sim.state.components.get('x1')!.enabled = false; // an admin disables x1 meanwhile
    h.clock.advance(1);
    await b.runCycle(); // re-POST under the same name with x2 only; x1 is free again
    expect(sessions(h.sim).map((s) => [s.name, s.ansible?.limit])).toEqual([[name, 'x2']]);
    expect(b.state.book.ownerOf('x1')).toBeUndefined();
  });
});
