import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, REPO_A, REPO_B, SHA_A, SHA_B } from './helpers';

let sim: Simulator;
beforeEach(() => {
  sim = makeSim();
});
afterEach(() => sim.close());

describe('GET /v3/components paging', () => {
  beforeEach(() => {
    // Codepoint order: x10 < x2 < x3 ...
    for (const id of ['x3', 'x1', 'x2', 'x10', 'x4', 'x5']) addComponent(sim, id);
  });

  it('sorts ids as plain strings and pages with an exclusive after_id', async () => {
    const p1 = await request(sim.app).get('/v3/components?limit=2');
    expect(p1.status).toBe(200);
    expect(p1.body.components.map((c: { id: string }) => c.id)).toEqual(['x1', 'x10']);
    expect(p1.body.next).toEqual({
      ids: '',
      status: '',
      enabled: null,
      config_name: '',
      state_details: false,
      config_details: false,
      tags: '',
      limit: 2,
      after_id: 'x10',
    });
    const p2 = await request(sim.app).get('/v3/components').query(p1.body.next);
    expect(p2.body.components.map((c: { id: string }) => c.id)).toEqual(['x2', 'x3']);
  });

  it('accepts an after_id that does not exist', async () => {
    const res = await request(sim.app).get('/v3/components?after_id=x25&limit=10');
    expect(res.body.components.map((c: { id: string }) => c.id)).toEqual(['x3', 'x4', 'x5']);
    expect(res.body.next).toBeNull();
  });

  it('gives next=null on a last page that is exactly full', async () => {
    const res = await request(sim.app).get('/v3/components?after_id=x3&limit=2');
    expect(res.body.components).toHaveLength(2);
    expect(res.body.next).toBeNull();
  });

  it('counts only matching records toward limit and peeks for a further match', async () => {
    sim.state.putComponent({ ...sim.state.components.get('x10')!, enabled: false });
    sim.state.putComponent({ ...sim.state.components.get('x2')!, enabled: false });
    const p1 = await request(sim.app).get('/v3/components?enabled=true&limit=2');
    expect(p1.body.components.map((c: { id: string }) => c.id)).toEqual(['x1', 'x3']);
    expect(p1.body.next.after_id).toBe('x3');
    sim.state.putComponent({ ...sim.state.components.get('x4')!, enabled: false });
    sim.state.putComponent({ ...sim.state.components.get('x5')!, enabled: false });
    const p2 = await request(sim.app).get('/v3/components?enabled=true&limit=2');
    expect(p2.body.next).toBeNull(); // nothing enabled after x3
  });

  it('uses default_page_size when limit is absent', async () => {
    sim.state.options.default_page_size = 4;
    const res = await request(sim.app).get('/v3/components');
    expect(res.body.components).toHaveLength(4);
    expect(res.body.next.limit).toBe(4);
  });

  it('rejects limit 0 and a non-integer limit', async () => {
    expect((await request(sim.app).get('/v3/components?limit=0')).status).toBe(400);
    expect((await request(sim.app).get('/v3/components?limit=abc')).status).toBe(400);
  });

  it('filters by ids (csv), in sorted order, skipping unknown ids', async () => {
    const res = await request(sim.app).get('/v3/components?ids=x5,x1,nope,x5');
    expect(res.body.components.map((c: { id: string }) => c.id)).toEqual(['x1', 'x5']);
  });
});

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

describe('PUT and bulk PATCH', () => {
  it('PUT /v3/components/{id} creates or replaces', async () => {
    const res = await request(sim.app).put('/v3/components/new1').send({ desired_config: 'cfg', enabled: true });
    expect(res.status).toBe(200);
    expect(sim.state.components.get('new1')).toMatchObject({
      id: 'new1',
      desired_config: 'cfg',
      error_count: 0,
      state: [],
    });
    const list = await request(sim.app).get('/v3/components?status=pending');
    expect(list.body.components.map((c: { id: string }) => c.id)).toEqual(['new1']);
  });

  it('PUT /v3/components (hwsync) and bulk PATCH with filters.ids (BOS)', async () => {
    const put = await request(sim.app)
      .put('/v3/components')
      .send([
        { id: 'n1', state: [], desired_config: '', error_count: 0, enabled: true },
        { id: 'n2', state: [], desired_config: '', error_count: 0, enabled: true },
        { id: 'n3', state: [], desired_config: '', error_count: 0, enabled: true },
      ]);
    expect(put.body.component_ids).toEqual(['n1', 'n2', 'n3']);
    const patch = await request(sim.app)
      .patch('/v3/components')
      .send({
        patch: { enabled: true, desired_config: 'cfg', tags: { bos_session: 'b1' }, state: [] },
        filters: { ids: 'n1,n3' },
      });
    expect(patch.status).toBe(200);
    expect(patch.body.component_ids).toEqual(['n1', 'n3']);
    expect(sim.state.components.get('n3')).toMatchObject({ desired_config: 'cfg', tags: { bos_session: 'b1' } });
    expect(sim.state.components.get('n2')!.desired_config).toBe('');
  });

  it('DELETE /v3/components/{id}', async () => {
    addComponent(sim, 'gone');
    expect((await request(sim.app).delete('/v3/components/gone')).status).toBe(204);
    expect(sim.state.componentKeys.has('gone')).toBe(false);
    expect((await request(sim.app).delete('/v3/components/gone')).status).toBe(404);
  });
});
