/** The simulator's GET and PATCH of one component: state_append, error_count, tags, and what CFS rejects. */
import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, REPO_A, REPO_B, SHA_A } from './helpers';

let sim: Simulator;
beforeEach(() => {
  sim = makeSim();
});
afterEach(() => sim.close());

describe('GET/PATCH /v3/components/{id}', () => {
  beforeEach(() => addComponent(sim, 'x1', { error_count: 2, tags: { keep: '1', drop: '2' } }));

  it('404 with the real title', async () => {
    const res = await request(sim.app).get('/v3/components/nope');
    expect(res.status).toBe(404);
    expect(res.body.title).toBe('Component not found.');
    expect((await request(sim.app).patch('/v3/components/nope').send({ enabled: true })).body.title).toBe(
      'Component not found.',
    );
  });

  it('state_append replaces layers with the same clone_url+playbook, appends last and stamps last_updated', async () => {
    sim.state.putComponent({
      ...sim.state.components.get('x1')!,
      state: [
        {
          clone_url: REPO_A,
          playbook: 'site.yml',
          commit: 'old',
          status: 'applied',
          session_name: 'o',
          last_updated: '2020-01-01T00:00:00Z',
        },
        {
          clone_url: REPO_A,
          playbook: 'other.yml',
          commit: 'old',
          status: 'applied',
          session_name: 'o',
          last_updated: '2020-01-01T00:00:00Z',
        },
        {
          clone_url: REPO_B,
          playbook: 'uss.yml',
          commit: 'old',
          status: 'applied',
          session_name: 'o',
          last_updated: '2020-01-01T00:00:00Z',
        },
      ],
    });
    const res = await request(sim.app)
      .patch('/v3/components/x1')
      .send({
        state_append: {
          clone_url: REPO_A,
          playbook: 'site.yml',
          commit: SHA_A,
          status: 'skipped',
          session_name: 'batcher-1',
        },
      });
    expect(res.status).toBe(200);
    const state = res.body.state;
    expect(state.map((l: { playbook: string }) => l.playbook)).toEqual(['other.yml', 'uss.yml', 'site.yml']);
    expect(state[2]).toMatchObject({ commit: SHA_A, status: 'skipped', session_name: 'batcher-1' });
    expect(state[2].last_updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.body).not.toHaveProperty('configuration_status');
    expect(res.body).not.toHaveProperty('state_append');
  });

  it.each([
    ['_failed', 'failed'],
    ['_incomplete', 'incomplete'],
    ['', 'applied'],
  ])('legacy commit suffix %s becomes status %s', async (suffix, status) => {
    const res = await request(sim.app)
      .patch('/v3/components/x1')
      .send({
        state_append: { clone_url: REPO_A, playbook: 'site.yml', commit: `${SHA_A}${suffix}`, session_name: 's' },
      });
    expect(res.body.state[0]).toMatchObject({ commit: SHA_A, status });
  });

  it('error_count: explicit value kept; reset to 0 by desired_config or state=[]; untouched otherwise', async () => {
    expect((await request(sim.app).patch('/v3/components/x1').send({ enabled: false })).body.error_count).toBe(2);
    expect((await request(sim.app).patch('/v3/components/x1').send({ error_count: 5 })).body.error_count).toBe(5);
    expect((await request(sim.app).patch('/v3/components/x1').send({ desired_config: 'cfg' })).body.error_count).toBe(
      0,
    );
    await request(sim.app).patch('/v3/components/x1').send({ error_count: 3 });
    expect(
      (await request(sim.app).patch('/v3/components/x1').send({ state: [], enabled: true })).body.error_count,
    ).toBe(0);
    await request(sim.app).patch('/v3/components/x1').send({ error_count: 3 });
    expect(
      (await request(sim.app).patch('/v3/components/x1').send({ desired_config: 'cfg', error_count: 4 })).body
        .error_count,
    ).toBe(4);
  });

  it('deep-merges tags and deletes tags with empty values', async () => {
    const res = await request(sim.app)
      .patch('/v3/components/x1')
      .send({ tags: { drop: '', add: 'v' } });
    expect(res.body.tags).toEqual({ keep: '1', add: 'v' });
  });

  it('rejects unknown and read-only fields and bad types with 400', async () => {
    for (const body of [
      { bogus: 1 },
      { configuration_status: 'pending' },
      { error_count: 'x' },
      { state_append: { clone_url: 'a', playbook: 'p', commit: 'c', extra: 1 } },
    ]) {
      const res = await request(sim.app).patch('/v3/components/x1').send(body);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('about:blank');
    }
  });

  it('rejects malformed JSON with the real message', async () => {
    const res = await request(sim.app)
      .patch('/v3/components/x1')
      .set('content-type', 'application/json')
      .send('{"enabled":');
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('Error parsing the data provided.');
  });

  it('GET one computes status and honours the detail flags', async () => {
    const res = await request(sim.app).get('/v3/components/x1?config_details=true&state_details=true');
    expect(res.body).toMatchObject({ id: 'x1', configuration_status: 'failed', state: [] });
    expect(res.body.desired_state).toHaveLength(2);
  });
});
