/** The simulator's GET /v3/components filters and query parsing, and the detail flags, as CFS answers them. */
import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, REPO_A, REPO_B, SHA_A, SHA_B } from './helpers';

let sim: Simulator;
beforeEach(() => {
  sim = makeSim();
});
afterEach(() => sim.close());

describe('GET /v3/components filters and parsing', () => {
  beforeEach(() => {
    addComponent(sim, 'a', { tags: { bos_session: 's1', role: 'compute' } });
    addComponent(sim, 'b', { enabled: false, tags: { bos_session: 's2' } });
    addComponent(sim, 'c', { desired_config: 'other' });
    addComponent(sim, 'd', {
      state: [
        {
          clone_url: REPO_A,
          playbook: 'site.yml',
          commit: SHA_A,
          status: 'applied',
          session_name: 's',
          last_updated: '2024-01-01T00:00:00Z',
        },
        {
          clone_url: REPO_B,
          playbook: 'uss.yml',
          commit: SHA_B,
          status: 'applied',
          session_name: 's',
          last_updated: '2024-01-01T00:00:00Z',
        },
      ],
    });
  });
  const ids = (res: request.Response) => res.body.components.map((c: { id: string }) => c.id);

  it.each(['true', 'True', 'TRUE'])('enabled=%s', async (v) => {
    expect(ids(await request(sim.app).get(`/v3/components?enabled=${v}`))).toEqual(['a', 'c', 'd']);
  });
  it.each(['false', 'False', 'FALSE'])('enabled=%s', async (v) => {
    expect(ids(await request(sim.app).get(`/v3/components?enabled=${v}`))).toEqual(['b']);
  });
  it('rejects a non-boolean', async () => {
    const res = await request(sim.app).get('/v3/components?enabled=yes');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ type: 'about:blank', status: 400 });
  });
  it('accepts empty strings as unset', async () => {
    expect(ids(await request(sim.app).get('/v3/components?ids=&status=&tags=&config_name=&enabled='))).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });
  it('filters by status computed per read', async () => {
    expect(ids(await request(sim.app).get('/v3/components?status=pending'))).toEqual(['a', 'b']);
    expect(ids(await request(sim.app).get('/v3/components?status=configured'))).toEqual(['d']);
    expect(ids(await request(sim.app).get('/v3/components?status=unconfigured'))).toEqual(['c']);
    expect((await request(sim.app).get('/v3/components?status=pending,failed')).status).toBe(400);
  });
  it('filters by config_name and tags; malformed tags are a 400', async () => {
    expect(ids(await request(sim.app).get('/v3/components?config_name=other'))).toEqual(['c']);
    expect(ids(await request(sim.app).get('/v3/components?tags=bos_session=s1,role=compute'))).toEqual(['a']);
    expect(ids(await request(sim.app).get('/v3/components?tags=bos_session=s1,role=x'))).toEqual([]);
    expect((await request(sim.app).get('/v3/components?tags=bos_session')).status).toBe(400);
  });
  it('state_details false removes state; config_details adds desired_state with layer status', async () => {
    const plain = await request(sim.app).get('/v3/components?ids=d');
    expect(plain.body.components[0].state).toBeUndefined();
    expect(plain.body.components[0].desired_state).toBeUndefined();
    expect(plain.body.components[0].configuration_status).toBe('configured');
    const full = await request(sim.app).get('/v3/components?ids=a&state_details=True&config_details=True');
    const a = full.body.components[0];
    expect(a.state).toEqual([]);
    expect(a.desired_state).toEqual([
      { name: 'cos', clone_url: REPO_A, commit: SHA_A, playbook: 'site.yml', status: 'pending' },
      { name: 'uss', clone_url: REPO_B, commit: SHA_B, playbook: 'uss.yml', status: 'pending' },
    ]);
    expect(a.logs).toBe('ara.cmn.site/hosts?name=a');
    const missing = await request(sim.app).get('/v3/components?ids=c&config_details=true');
    expect(missing.body.components[0].desired_state).toEqual([]);
  });
  it('omits logs when include_ara_links is false', async () => {
    sim.state.options.include_ara_links = false;
    const res = await request(sim.app).get('/v3/components?ids=a');
    expect(res.body.components[0]).not.toHaveProperty('logs');
  });
});
