/** Session history with member snapshots and active intervals; a slow operator; odd component ids. */
import request from 'supertest';
import { createSimulator, parseScenario, type Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, REPO_A, SHA_A } from './helpers';

describe('session history', () => {
  let sim: Simulator;
  let clock = 1_000_000;
  beforeEach(() => {
    clock = 1_000_000;
    sim = makeSim({ now: () => clock });
    addComponent(sim, 'x1', { tags: { role: 'compute' } });
    addComponent(sim, 'x2', {
      tags: { role: 'compute', rack: '1' },
      state: [
        {
          clone_url: REPO_A,
          playbook: 'site.yml',
          commit: SHA_A,
          status: 'applied',
          session_name: 's0',
          last_updated: '',
        },
      ],
    });
  });
  afterEach(() => sim.close());

  it('records each member as it was at POST time, and when the session was active/running/ended', async () => {
    await request(sim.app)
      .post('/v3/sessions')
      .send({ name: 's1', configuration_name: 'cfg', ansible_limit: 'x1,x2,ghost' })
      .expect(201);
    sim.state.putComponent({ ...sim.state.components.get('x1')!, desired_config: 'other' }); // later changes do not leak in
    clock += 100;
    sim.operator.step('s1');
    clock += 100;
    sim.operator.step('s1');
    const h = (await request(sim.app).get('/__sim/sessions-history')).body.sessions[0];
    expect(h.hosts).toEqual(['x1', 'x2', 'ghost']);
    expect(Object.keys(h.members).sort()).toEqual(['x1', 'x2']); // ghost is no component
    expect(h.members.x1).toEqual({
      desired_config: 'cfg',
      pending_layers: '0,1',
      latest_status: '',
      tags: { role: 'compute' },
      status: 'pending',
      enabled: true,
      error_count: 0,
    });
    expect(h.members.x2).toMatchObject({
      pending_layers: '1',
      latest_status: 'applied',
      tags: { role: 'compute', rack: '1' },
    });
    expect(h).toMatchObject({
      created_ms: 1_000_000,
      running_ms: 1_000_100,
      completed_ms: 1_000_200,
      ended_ms: 1_000_200,
      fault: null,
      received_ms: 1_000_000,
    });
  });

  it('ended_ms is the delete time when deleted first; overlaps are found from the history alone', async () => {
    for (const [name, limit] of [
      ['a', 'x1'],
      ['b', 'x1,x2'],
    ]) {
      await request(sim.app)
        .post('/v3/sessions')
        .send({ name, configuration_name: 'cfg', ansible_limit: limit })
        .expect(201);
      clock += 10;
    }
    await request(sim.app).delete('/v3/sessions/a').expect(204);
    const body = (await request(sim.app).get('/__sim/sessions-history')).body;
    expect(body.sessions.find((s: { name: string }) => s.name === 'a').ended_ms).toBe(1_000_020);
    expect(body.overlaps).toEqual([{ component: 'x1', sessions: ['a', 'b'] }]);
  });
});

describe('slow operator', () => {
  let sim: Simulator;
  let clock = 1_000_000;
  beforeEach(() => {
    clock = 1_000_000;
    sim = makeSim({ now: () => clock, operator: { paused: true, pendingMs: 500, maxStartsPerSecond: 2 } });
    for (let i = 0; i < 5; i++) addComponent(sim, `n${i}`);
  });
  afterEach(() => sim.close());

  const status = (name: string) => sim.state.sessions.get(name)!.status.session;

  it('keeps sessions pending for pendingMs, then starts at most maxStartsPerSecond, oldest first, job set only at start', async () => {
    for (let i = 0; i < 5; i++) {
      await request(sim.app)
        .post('/v3/sessions')
        .send({ name: `s${i}`, configuration_name: 'cfg', ansible_limit: `n${i}` })
        .expect(201);
    }
    sim.operator.tick(clock + 499);
    expect([0, 1, 2, 3, 4].map((i) => status(`s${i}`).status)).toEqual(Array(5).fill('pending'));
    sim.operator.tick(clock + 500);
    expect([0, 1, 2, 3, 4].map((i) => status(`s${i}`).status)).toEqual([
      'running',
      'running',
      'pending',
      'pending',
      'pending',
    ]);
    expect(status('s2').job).toBeUndefined(); // the operator has not got to it
    sim.operator.tick(clock + 1499);
    expect(status('s2').status).toBe('pending');
    sim.operator.tick(clock + 1500);
    expect([2, 3, 4].map((i) => status(`s${i}`).status)).toEqual(['running', 'running', 'pending']);
  });

  it('is set through the control API and the scenario', async () => {
    const res = await request(sim.app).post('/__sim/operator').send({ maxStartsPerSecond: 7, pendingMs: 3000 });
    expect(res.body.settings).toMatchObject({ maxStartsPerSecond: 7, pendingMs: 3000 });
    const s2 = createSimulator({ scenario: { operator: { maxStartsPerSecond: 3, pendingMs: 9000 } } });
    expect(s2.operator.settings).toMatchObject({ maxStartsPerSecond: 3, pendingMs: 9000 });
    await s2.close();
  });
});

describe('component ids an Ansible limit cannot express', () => {
  const ids = ['x5002c0s0b0n0,x5002c0s1b0n0', 'x1 x2', '', 'x5002c0s0b0n0'];
  const scenario = {
    configurations: [{ name: 'c', layers: [{ name: 'l', clone_url: REPO_A, commit: SHA_A, playbook: 'site.yml' }] }],
    components: ids.map((id) => ({ id, desired_config: 'c', enabled: true })),
  };

  it('are accepted in a scenario and served as stored', async () => {
    const sim = createSimulator({ scenario, operator: { paused: true } });
    try {
      const list = await request(sim.app).get('/v3/components?status=pending');
      expect(list.body.components.map((c: { id: string }) => c.id)).toEqual([
        '',
        'x1 x2',
        'x5002c0s0b0n0',
        'x5002c0s0b0n0,x5002c0s1b0n0',
      ]);
      const one = await request(sim.app).get(`/v3/components/${encodeURIComponent('x1 x2')}`);
      expect([one.status, one.body.id]).toEqual([200, 'x1 x2']);
      // A comma id aliases two real ids in an ids= filter, as in the real server.
      const byIds = await request(sim.app).get('/v3/components?ids=x5002c0s0b0n0,x5002c0s1b0n0');
      expect(byIds.body.components.map((c: { id: string }) => c.id)).toEqual(['x5002c0s0b0n0']);
    } finally {
      await sim.close();
    }
  });

  it('a duplicate odd id is still rejected', () => {
    expect(() => parseScenario({ components: [{ id: 'a,b' }, { id: 'a,b' }] })).toThrow(/duplicate component id 'a,b'/);
  });
});
