/**
 * Against the simulator: CFS errors during rebuild or a cycle are waited out, never a crash; rebuilt components are
 * never batched twice; malformed records are skipped; failing or lost creates are retried without a duplicate
 * session; what a cycle costs CFS; and which conditions are fatal. Each was a defect of the original batcher.
 */
import { CfsClient, CfsError, type CfsSession, type Phase } from '@cfs-batcher/shared';
import { createBatcher, type CfsApi } from '@cfs-batcher/batcher';
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
import type { Simulator } from '@cfs-batcher/cfs-sim';

let h: Harness;
const logs = harnessLifecycle(() => h);

function runningSession(
  name: string,
  limit: string,
  configLimit = '0',
  status = 'running',
): Parameters<Simulator['state']['putSession']>[0] {
  return {
    name,
    configuration: { name: 'cfg', limit: configLimit },
    ansible: { config: 'cfs-default-ansible-cfg', limit, verbosity: 0, passthrough: '' },
    target: { definition: 'dynamic', groups: [], image_map: [] },
    status: {
      artifacts: [],
      session: { start_time: '2024-01-01T00:00:00', status: status as 'running', succeeded: 'none' },
    },
    tags: {},
    debug_on_failure: false,
  };
}

describe('1. any CFS answer during rebuild or a cycle is logged and retried, never a crash', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['404', { type: 'status', status: 404 }, /^Unexpected response from CFS: 404/],
    ['null body', { type: 'status', status: 200, body: 'null' }, /^Unexpected response from CFS/],
    ['invalid JSON', { type: 'invalid-json' }, /^Non-JSON response from CFS/],
    ['503', { type: 'status', status: 503 }, /^Unexpected response from CFS: 503/],
    ['timeout', { type: 'latency', ms: 3000 }, /^Unable to connect to CFS/],
  ];

  it.each(cases)('GET /v3/sessions answers %s during rebuild', async (_label, action, line) => {
    h = await startHarness({ clientOptions: { requestTimeoutMs: 300 }, seed: (sim) => putConfig(sim) });
    const rule = h.sim.faults.add({ match: 'GET /v3/sessions', action: action as never });
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('error');
    expect(h.batcher.state.rebuilt).toBe(false);
    expect(logs.lines.some((l) => line.test(l.message) && l.level === 'ERROR')).toBe(true);
    h.sim.faults.remove(rule);
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
    expect(h.batcher.state.rebuilt).toBe(true);
    expect(logs.has('Rebuilt previous state.  Found 0 incomplete sessions/batches.', 'INFO')).toBe(true);
  });

  it.each(cases)('GET /v3/components answers %s during a cycle', async (_label, action, line) => {
    h = await startHarness({
      clientOptions: { requestTimeoutMs: 300 },
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
      },
    });
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
    // New work: the full listing (a refused lean one would be retried in full within the cycle, collect-lean.test.ts)
    putComponents(h.sim, ['x1']);
    h.sim.faults.add({ match: 'GET /v3/components', action: action as never, scope: { times: 1 } });
    h.clock.advance(1);
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('error');
    expect(logs.lines.some((l) => line.test(l.message) && l.logger === 'batcher.cfs.components')).toBe(true);
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
  });

  it('run() waits with exponential backoff in phase waiting_for_cfs, stamping the heartbeat; no tight loop', async () => {
    const phases: Phase[] = [];
    const sleeps: number[] = [];
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    h.sim.faults.add({ match: 'GET /v3/sessions', action: { type: 'status', status: 503 } });
    const ac = new AbortController();
    const b = createBatcher({
      client: h.client,
      clock: h.clock,
      random: () => 0.9,
      sleep: async (ms) => {
        sleeps.push(ms);
        phases.push(b.heartbeat.currentPhase);
        h.clock.advance(ms);
        if (sleeps.length >= 40) ac.abort();
      },
    });
    await b.run(ac.signal);
    const requests = count(h.sim, 'GET /v3/sessions');
    const waited = sleeps.reduce((a, x) => a + x, 0);
    // ~1 request per wait, waits double from 1 s up to one check interval (10 s): far from the original's
    // hundreds per second, and never longer than a cycle, so work resumes within one cycle of CFS returning
    expect(requests).toBeLessThan(25);
    expect(waited / requests).toBeGreaterThan(5000);
    const waits = waitLengths(sleeps);
    expect(Math.max(...waits)).toBeLessThanOrEqual(10_000);
    expect(waits.slice(0, 4)).toEqual([1000, 2000, 4000, 8000].map((ms) => Math.round(ms * (0.5 + 0.9 / 2))));
    expect(phases.every((p) => p === 'waiting_for_cfs')).toBe(true);
    expect(Math.max(...sleeps)).toBeLessThanOrEqual(1000); // stamped at least every second
    expect(logs.has('Waiting for CFS to become available', 'INFO')).toBe(true);
    expect(logs.has('Rebuilding state was interrupted. Trying again...', 'WARNING')).toBe(true);
    expect(b.heartbeat.currentPhase).toBe('stopping');
  });
});

/** Joins the 1 s stamping steps back into whole waits (with random() = 0.9 no wait is a whole number of steps). */
function waitLengths(sleeps: number[]): number[] {
  const out: number[] = [];
  let cur = 0;
  for (const ms of sleeps) {
    cur += ms;
    if (ms < 1000) {
      out.push(cur);
      cur = 0;
    }
  }
  return out;
}

describe('2. rebuilt components are busy: never in two active sessions after a restart', () => {
  it('adopts incomplete batcher- sessions and does not batch their members again', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 2);
        fastOptions(sim);
        putComponents(sim, ['x1', 'x2', 'x3']);
        // x1 finished layer 0 since: its key (limit "1", status applied) differs from the session's
        const x1 = sim.state.components.get('x1')!;
        x1.state = [
          {
            clone_url: 'https://vcs/l0.git',
            playbook: 'site.yml',
            commit: 'a'.repeat(40),
            status: 'applied',
            session_name: 'batcher-old',
            last_updated: '2024-01-01T00:00:00Z',
          },
        ];
        sim.state.putSession(runningSession('batcher-old', 'x1,x2', '0,1'));
        sim.state.putSession(runningSession('my-batcher-foreign', 'x3'));
        sim.state.putSession(runningSession('batcher-empty', ''));
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(logs.has('Rebuilt previous state.  Found 1 incomplete sessions/batches.', 'INFO')).toBe(true);
    expect(logs.has(/Ignoring incomplete session batcher-empty/, 'WARNING')).toBe(true);
    const created = sessions(h.sim).filter(
      (s) => !['batcher-old', 'my-batcher-foreign', 'batcher-empty'].includes(s.name),
    );
    expect(created.map((s) => s.ansible.limit)).toEqual(['x3']);
    // the adopted session ends: its members are released and scheduled again
    const old = h.sim.state.sessions.get('batcher-old')!;
    old.status.session.status = 'complete';
    old.status.session.succeeded = 'false';
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    const limits = sessions(h.sim).map((s) => s.ansible.limit.split(',').sort().join(','));
    expect(limits.filter((l) => l.includes('x1'))).toHaveLength(2);
    expect(h.sim.history.overlappingSessions()).toEqual([]);
  });
});

describe('3. a malformed component record is skipped, the others are scheduled', () => {
  it('skips records missing error_count or a layer playbook', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        sim.state.putConfiguration({
          name: 'nopb',
          layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: 'a'.repeat(40) }],
        });
        fastOptions(sim);
        putComponents(sim, ['good']);
        sim.state.putComponent({ id: 'bad-ec', desired_config: 'cfg', enabled: true, state: [], tags: {} });
        putComponents(sim, ['bad-pb'], { desired_config: 'nopb' });
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('ok');
    expect(sessions(h.sim).map((s) => s.ansible.limit)).toEqual(['good']);
    expect(logs.has('Skipping component bad-ec: missing or invalid error_count', 'WARNING')).toBe(true);
    expect(logs.has('Skipping component bad-pb: desired_state[0] has no playbook', 'WARNING')).toBe(true);
    const invalid = await h.batcher.metrics.invalidRecords.get();
    expect(invalid.values.find((v) => v.labels.kind === 'component')!.value).toBeGreaterThanOrEqual(2);
  });
});

describe('4. a failing create is retried with backoff and re-validated', () => {
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

describe('5. a POST that timed out may have created the session: look it up before creating again', () => {
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

describe('6. per-cycle cost', () => {
  it('follows active sessions with two paged lists, not one GET per session', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 1 });
        putComponents(sim, ids('x', 5));
      },
    });
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(5);
    h.sim.operator.step(); // all running
    h.sim.stats.reset();
    await h.batcher.runCycle();
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBe(0);
    expect(count(h.sim, 'GET /v3/sessions')).toBe(2);
    expect(h.sim.stats.snapshot().total).toBe(4); // options, 2 session lists, 1 component page
  });

  it('finished sessions are found by one complete-list and their members read with one ids= query', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 1 });
        putComponents(sim, ids('x', 5));
      },
    });
    await h.batcher.runCycle();
    h.sim.operator.runToCompletion();
    h.sim.stats.reset();
    await h.batcher.runCycle();
    expect(h.batcher.state.book.size).toBe(0);
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBe(0);
    expect(count(h.sim, 'GET /v3/sessions')).toBe(3); // pending, running, complete (max_age-bounded)
    expect(count(h.sim, 'GET /v3/components')).toBe(2); // one ids= read for all 5 batches + the collect page
  });

  it('does not release a session that a list failed to show: one GET confirms it', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x1']);
      },
    });
    const hidden = Object.create(h.client) as CfsApi;
    hidden.listSessions = async function* (filter, o) {
      for await (const page of h.client.listSessions(filter, o)) yield { ...page, sessions: [] as CfsSession[] };
    };
    const b = createBatcher({ client: hidden, clock: h.clock, sleep: async () => undefined });
    await b.runCycle();
    h.clock.advance(1);
    await b.runCycle();
    await b.runCycle();
    expect(b.state.book.count('active')).toBe(1);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(1);
    expect(count(h.sim, 'GET /v3/sessions/{session_name}')).toBe(1);
  });

  it('keeps ids= queries within URL limits (the client chunks them)', async () => {
    const many = ids('x9000c1s0b0n', 400);
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 400 });
        putComponents(sim, many);
      },
    });
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    h.sim.operator.runToCompletion();
    h.sim.stats.reset();
    await h.batcher.runCycle();
    expect(count(h.sim, 'GET /v3/components')).toBeGreaterThanOrEqual(3); // collect + >= 2 ids= chunks
    expect(h.batcher.state.book.size).toBe(0);
  });
});

describe('7. fatal conditions', () => {
  it('a bug inside a cycle is logged with its stack and rethrown (main exits non-zero)', async () => {
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    const broken = Object.create(h.client) as CfsApi;
    broken.getOptions = async () => {
      throw new TypeError('boom');
    };
    const b = createBatcher({ client: broken, clock: h.clock, sleep: async () => undefined });
    await expect(b.runCycle()).rejects.toThrow('boom');
    const line = logs.lines.find((l) => l.message === 'Unexpected error occurred');
    expect(line?.level).toBe('ERROR');
    expect(String(line?.stack)).toContain('TypeError: boom');
    await expect(b.run(new AbortController().signal)).rejects.toThrow('boom');
  });
});
