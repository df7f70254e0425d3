import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { makeSim } from './helpers';

let sim: Simulator;
let clock = Date.parse('2024-01-10T12:00:00Z');
beforeEach(() => {
  clock = Date.parse('2024-01-10T12:00:00Z');
  sim = makeSim({ now: () => clock });
});
afterEach(() => sim.close());

const valid = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  configuration_name: 'cfg',
  configuration_limit: '0,1',
  ansible_limit: 'x1,x2',
  target: { definition: 'dynamic' },
  ...extra,
});

describe('POST /v3/sessions', () => {
  it('201 with the V3 session document', async () => {
    const res = await request(sim.app)
      .post('/v3/sessions')
      .send(valid('batcher-2df030b8-1bc5-4afb-ac29-df93815473f2', { tags: { bos_session: 'b' } }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      name: 'batcher-2df030b8-1bc5-4afb-ac29-df93815473f2',
      configuration: { name: 'cfg', limit: '0,1' },
      ansible: { config: 'cfs-default-ansible-cfg', limit: 'x1,x2', verbosity: 0, passthrough: '' },
      target: { definition: 'dynamic', groups: [], image_map: [] },
      status: {
        artifacts: [],
        session: {
          start_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
          status: 'pending',
          succeeded: 'none',
        },
      },
      tags: { bos_session: 'b' },
      debug_on_failure: false,
      logs: 'ara.cmn.site/?label=batcher-2df030b8-1bc5-4afb-ac29-df93815473f2',
    });
    expect(res.body.status.session).not.toHaveProperty('job');
  });

  it.each([
    ['missing configuration_name', { name: 'ok-name' }],
    ['name too long (46)', valid('a'.repeat(46))],
    ['name with upper case', valid('Batcher-1')],
    ['name ending with a dash', valid('batcher-')],
    ['unknown field', valid('ok-name', { bogus: true })],
    ['verbosity out of range', valid('ok-name', { ansible_verbosity: 5 })],
    ['ansible_limit with a space', valid('ok-name', { ansible_limit: 'x1, x2' })],
  ])('400 on %s', async (_n, body) => {
    const res = await request(sim.app).post('/v3/sessions').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'about:blank', status: 400 });
    expect(sim.state.sessions.size).toBe(0);
  });

  it('accepts a 45-character name', async () => {
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send(valid('a'.repeat(45)))
      ).status,
    ).toBe(201);
  });

  it('409 Conflicting session name', async () => {
    await request(sim.app).post('/v3/sessions').send(valid('s1'));
    const res = await request(sim.app).post('/v3/sessions').send(valid('s1'));
    expect(res.status).toBe(409);
    expect(res.body.title).toBe('Conflicting session name');
  });

  it('400 Invalid configuration unless the name starts with debug_', async () => {
    const res = await request(sim.app)
      .post('/v3/sessions')
      .send(valid('s1', { configuration_name: 'nope' }));
    expect(res.status).toBe(400);
    expect(res.body.title).toBe('Invalid configuration');
    expect(res.body.detail).toBe('No configurations exist named nope');
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send(valid('s2', { configuration_name: 'debug_x' }))
      ).status,
    ).toBe(201);
  });

  it('enforces the target groups rule', async () => {
    const g = [{ name: 'g', members: ['x1'] }];
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send(valid('t1', { target: { definition: 'dynamic', groups: g } }))
      ).status,
    ).toBe(400);
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send(valid('t2', { target: { definition: 'spec' } }))
      ).status,
    ).toBe(400);
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send(valid('t3', { target: { definition: 'spec', groups: g } }))
      ).status,
    ).toBe(201);
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send(valid('t4', { target: { definition: 'image', groups: g } }))
      ).status,
    ).toBe(400);
  });
});

describe('GET/DELETE sessions', () => {
  beforeEach(async () => {
    for (const n of ['batcher-b', 'batcher-a', 'admin-c', 'batcher-d']) {
      await request(sim.app)
        .post('/v3/sessions')
        .send(valid(n, n === 'batcher-d' ? { tags: { bos_session: 'z' } } : {}));
      clock += 3_600_000; // one hour apart
    }
  });
  const names = (res: request.Response) => res.body.sessions.map((s: { name: string }) => s.name);

  it('GET one; 404 Session not found.', async () => {
    expect((await request(sim.app).get('/v3/sessions/batcher-a')).body.name).toBe('batcher-a');
    const res = await request(sim.app).get('/v3/sessions/nope');
    expect(res.status).toBe(404);
    expect(res.body.title).toBe('Session not found.');
  });

  it('lists by name with after_id/next paging and peek-ahead', async () => {
    const p1 = await request(sim.app).get('/v3/sessions?limit=2');
    expect(names(p1)).toEqual(['admin-c', 'batcher-a']);
    expect(p1.body.next).toEqual({
      age: null,
      min_age: null,
      max_age: null,
      status: '',
      name_contains: '',
      succeeded: '',
      tags: '',
      limit: 2,
      after_id: 'batcher-a',
    });
    const p2 = await request(sim.app).get('/v3/sessions').query({ limit: 2, after_id: 'batcher-a' });
    expect(names(p2)).toEqual(['batcher-b', 'batcher-d']);
    expect(p2.body.next).toBeNull();
  });

  it('filters by name_contains, status, succeeded, tags and age', async () => {
    expect(names(await request(sim.app).get('/v3/sessions?name_contains=batcher'))).toEqual([
      'batcher-a',
      'batcher-b',
      'batcher-d',
    ]);
    sim.operator.step('batcher-a');
    expect(names(await request(sim.app).get('/v3/sessions?status=running'))).toEqual(['batcher-a']);
    sim.operator.step('batcher-a');
    expect(names(await request(sim.app).get('/v3/sessions?succeeded=true'))).toEqual(['batcher-a']);
    expect(names(await request(sim.app).get('/v3/sessions?tags=bos_session=z'))).toEqual(['batcher-d']);
    // Created one hour apart: batcher-b 4h old, batcher-a 3h, admin-c 2h, batcher-d 1h (bounds inclusive).
    expect(names(await request(sim.app).get('/v3/sessions?min_age=3h'))).toEqual(['batcher-a', 'batcher-b']);
    expect(names(await request(sim.app).get('/v3/sessions?max_age=2h'))).toEqual(['admin-c', 'batcher-d']);
    expect((await request(sim.app).get('/v3/sessions?min_age=3x')).status).toBe(400);
    expect((await request(sim.app).get('/v3/sessions?status=done')).status).toBe(400);
  });

  it('DELETE one: 204 with no body, then 404; kept in history', async () => {
    const res = await request(sim.app).delete('/v3/sessions/batcher-a');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await request(sim.app).delete('/v3/sessions/batcher-a')).status).toBe(404);
    expect(sim.history.get('batcher-a')?.deleted_ms).not.toBeNull();
    const hist = await request(sim.app).get('/__sim/sessions-history');
    expect(hist.body.sessions.map((s: { name: string }) => s.name)).toContain('batcher-a');
  });

  it('bulk DELETE defaults to status=complete and honours min_age', async () => {
    sim.operator.runToCompletion('batcher-b');
    sim.operator.runToCompletion('batcher-d');
    const res = await request(sim.app).delete('/v3/sessions?min_age=2h');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ session_ids: ['batcher-b'] });
    expect(sim.state.sessions.has('batcher-d')).toBe(true);
    expect(sim.state.sessions.has('batcher-a')).toBe(true); // pending: never bulk-deleted by default
  });
});

describe('options', () => {
  it('a fresh sim has only the server defaults (no batcher options)', async () => {
    const res = await request(sim.app).get('/v3/options');
    expect(res.body).toEqual({
      default_playbook: 'site.yml',
      default_ansible_config: 'cfs-default-ansible-cfg',
      logging_level: 'INFO',
      default_page_size: 1000,
      include_ara_links: true,
    });
  });

  it('PATCH merges and returns 200 with the whole dict', async () => {
    await request(sim.app).patch('/v3/options').send({ batch_size: 25 });
    const res = await request(sim.app).patch('/v3/options').send({ batch_window: 60, logging_level: 'DEBUG' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      batch_size: 25,
      batch_window: 60,
      logging_level: 'DEBUG',
      default_playbook: 'site.yml',
    });
    expect((await request(sim.app).get('/v3/options')).body.batch_size).toBe(25);
  });

  it.each([
    [{ batch_size: 0 }],
    [{ batcher_check_interval: 0 }],
    [{ batch_window: -1 }],
    [{ batcher_pending_timeout: 0 }],
    [{ default_batcher_retry_policy: -1 }],
    [{ logging_level: 'TRACE' }],
    [{ session_ttl: '7 days' }],
    [{ batcher_disable: 'yes' }],
    [{ unknown_option: 1 }],
    [{ default_playbook: 'x.yml' }],
  ])('400 for %j', async (body) => {
    const res = await request(sim.app).patch('/v3/options').send(body);
    expect(res.status).toBe(400);
    expect(sim.state.options).toEqual({});
  });
});

describe('configurations, health, versions', () => {
  it('PUT turns a branch into a commit and rejects conflicting layers', async () => {
    const put = await request(sim.app)
      .put('/v3/configurations/new')
      .send({ layers: [{ name: 'l', clone_url: 'https://h/r.git', branch: 'main', playbook: 'site.yml' }] });
    expect(put.status).toBe(200);
    expect(put.body.layers[0].commit).toMatch(/^[0-9a-f]{40}$/);
    expect(put.body.name).toBe('new');
    const dup = await request(sim.app)
      .put('/v3/configurations/dup')
      .send({
        layers: [
          { clone_url: 'https://h/r.git', commit: 'a'.repeat(40), playbook: 'p.yml' },
          { clone_url: 'https://h/r.git', commit: 'b'.repeat(40), playbook: 'p.yml' },
        ],
      });
    expect(dup.status).toBe(400);
    expect(dup.body.title).toBe('Error with conflicting layers');
    expect((await request(sim.app).get('/v3/configurations/new')).body.layers).toHaveLength(1);
    expect((await request(sim.app).get('/v3/configurations/none')).status).toBe(404);
    expect(
      (await request(sim.app).get('/v3/configurations')).body.configurations.map((c: { name: string }) => c.name),
    ).toEqual(['cfg', 'new']);
  });

  it('/healthz, /versions, /v3', async () => {
    expect((await request(sim.app).get('/healthz')).body).toEqual({ db_status: 'ok', kafka_status: 'ok' });
    sim.state.health.db_status = 'not_available';
    expect((await request(sim.app).get('/healthz')).status).toBe(503);
    expect((await request(sim.app).get('/versions')).body).toEqual({ major: '1', minor: '31', patch: '1' });
    expect((await request(sim.app).get('/v3')).body).toEqual({ major: '1', minor: '31', patch: '1' });
  });
});
