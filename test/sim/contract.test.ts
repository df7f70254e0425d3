/**
 * Contract: the simulator validating requests AND responses against the project's CFS v3 contract document (as it
 * does with `--validate`). Every endpoint the batcher and sidecar use is exercised with valid requests and must pass;
 * invalid requests/responses must not.
 */
import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, REPO_A, SHA_A } from './helpers';

describe('contract with the CFS v3 contract document', () => {
  let sim: Simulator;
  beforeAll(() => {
    sim = makeSim({ validateWithSpec: true });
    for (let i = 0; i < 5; i++) addComponent(sim, `x3000c0s${i}b0n0`, { tags: { bos_session: 'b1' } });
  });
  afterAll(() => sim.close());
  afterEach(() => {
    const seen = [...sim.validationErrors];
    sim.validationErrors.length = 0;
    expect(seen).toEqual([]);
  });

  it('has the validator on', () => expect(sim.validating).toBe(true));

  it('versions and health', async () => {
    for (const p of ['/', '/versions', '/v3', '/healthz']) expect((await request(sim.app).get(p)).status).toBe(200);
  });

  it('options GET and PATCH (the batcher seeds its options)', async () => {
    expect((await request(sim.app).get('/v3/options')).status).toBe(200);
    const res = await request(sim.app).patch('/v3/options').send({
      batcher_check_interval: 10,
      batch_size: 25,
      batch_window: 60,
      default_batcher_retry_policy: 3,
      batcher_max_backoff: 3600,
      batcher_disable: false,
      batcher_pending_timeout: 300,
      logging_level: 'INFO',
    });
    expect(res.status).toBe(200);
  });

  it('components list the way the batcher pages it, with next passed back', async () => {
    const p1 = await request(sim.app).get(
      '/v3/components?enabled=True&status=pending&config_details=True&state_details=True&limit=2',
    );
    expect(p1.status).toBe(200);
    expect(p1.body.components).toHaveLength(2);
    const next = Object.fromEntries(Object.entries(p1.body.next).filter(([, v]) => v !== null));
    const p2 = await request(sim.app).get('/v3/components').query(next);
    expect(p2.status).toBe(200);
    expect(
      (
        await request(sim.app).get(
          '/v3/components?ids=x3000c0s1b0n0,x3000c0s2b0n0&status=pending&config_details=true&state_details=true',
        )
      ).status,
    ).toBe(200);
    expect((await request(sim.app).get('/v3/components?ids=&status=&tags=bos_session=b1&config_name=')).status).toBe(
      200,
    );
  });

  it('component GET/PATCH (state_append, error_count, legacy suffix)', async () => {
    expect(
      (await request(sim.app).get('/v3/components/x3000c0s0b0n0?config_details=True&state_details=True')).status,
    ).toBe(200);
    const append = {
      commit: SHA_A,
      playbook: 'site.yml',
      clone_url: REPO_A,
      status: 'skipped',
      session_name: 'batcher-1',
    };
    expect((await request(sim.app).patch('/v3/components/x3000c0s0b0n0').send({ state_append: append })).status).toBe(
      200,
    );
    expect(
      (
        await request(sim.app)
          .patch('/v3/components/x3000c0s1b0n0')
          .send({ state_append: { ...append, status: 'failed' }, error_count: 2 })
      ).status,
    ).toBe(200);
    const { status: _s, ...legacy } = append;
    expect(
      (
        await request(sim.app)
          .patch('/v3/components/x3000c0s2b0n0')
          .send({ state_append: { ...legacy, commit: `${SHA_A}_incomplete` } })
      ).status,
    ).toBe(200);
    expect(
      (await request(sim.app).get('/v3/components?ids=x3000c0s2b0n0&config_details=true&state_details=true')).status,
    ).toBe(200);
    expect(
      (await request(sim.app).patch('/v3/components/x3000c0s3b0n0').send({ state: [], enabled: true })).status,
    ).toBe(200);
    expect((await request(sim.app).get('/v3/components/nope')).status).toBe(404);
  });

  it('PUT one component, PUT list, bulk PATCH', async () => {
    expect(
      (
        await request(sim.app)
          .put('/v3/components/x9')
          .send({ desired_config: 'cfg', enabled: true, state: [], error_count: 0 })
      ).status,
    ).toBe(200);
    expect(
      (
        await request(sim.app)
          .put('/v3/components')
          .send([{ id: 'x10', state: [], desired_config: '', error_count: 0, enabled: true }])
      ).status,
    ).toBe(200);
    const bulk = await request(sim.app)
      .patch('/v3/components')
      .send({
        patch: { enabled: true, desired_config: 'cfg', tags: { bos_session: 'b2' } },
        filters: { ids: 'x9,x10' },
      });
    expect(bulk.status).toBe(200);
    expect((await request(sim.app).delete('/v3/components/x10')).status).toBe(204);
  });

  it('sessions: POST, GET one, list, DELETE, bulk DELETE, lifecycle', async () => {
    const body = {
      name: 'batcher-2df030b8-1bc5-4afb-ac29-df93815473f2',
      configuration_name: 'cfg',
      configuration_limit: '0,1',
      ansible_limit: 'x3000c0s0b0n0,x3000c0s1b0n0',
      target: { definition: 'dynamic' },
      tags: { bos_session: 'b1' },
    };
    expect((await request(sim.app).post('/v3/sessions').send(body)).status).toBe(201);
    expect((await request(sim.app).post('/v3/sessions').send(body)).status).toBe(409);
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send({ ...body, name: 'other', configuration_name: 'missing' })
      ).status,
    ).toBe(400);
    expect((await request(sim.app).get(`/v3/sessions/${body.name}`)).status).toBe(200);
    sim.operator.step();
    expect((await request(sim.app).get(`/v3/sessions/${body.name}`)).body.status.session.status).toBe('running');
    sim.operator.step();
    const done = await request(sim.app).get(`/v3/sessions/${body.name}`);
    expect(done.body.status.session).toMatchObject({ status: 'complete', succeeded: 'true' });
    expect((await request(sim.app).get('/v3/sessions?limit=1')).status).toBe(200);
    expect(
      (
        await request(sim.app).get(
          '/v3/sessions?name_contains=batcher-&status=complete&succeeded=true&min_age=0m&tags=bos_session=b1',
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await request(sim.app)
          .post('/v3/sessions')
          .send({ ...body, name: 'to-delete' })
      ).status,
    ).toBe(201);
    expect((await request(sim.app).delete('/v3/sessions/to-delete')).status).toBe(204);
    expect((await request(sim.app).delete('/v3/sessions/to-delete')).status).toBe(404);
    const bulk = await request(sim.app).delete('/v3/sessions?status=complete&min_age=0m');
    expect(bulk.status).toBe(200);
    expect(bulk.body.session_ids).toEqual([body.name]);
  });

  it('configurations GET/PUT/list', async () => {
    expect((await request(sim.app).get('/v3/configurations/cfg')).status).toBe(200);
    expect(
      (
        await request(sim.app)
          .put('/v3/configurations/c2')
          .send({ layers: [{ name: 'l', clone_url: REPO_A, branch: 'main', playbook: 'site.yml' }] })
      ).status,
    ).toBe(200);
    expect((await request(sim.app).get('/v3/configurations?limit=1')).status).toBe(200);
  });

  it('rejects an invalid request (proves request validation is on)', async () => {
    const res = await request(sim.app).get('/v3/components?limit=zero');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/limit/);
    expect(sim.validationErrors).toHaveLength(1);
    sim.validationErrors.length = 0;
  });

  it('rejects an invalid response (proves response validation is on)', async () => {
    sim.state.putComponent({
      id: 'bad',
      desired_config: 'cfg',
      error_count: 'many' as unknown as number,
      enabled: true,
      state: [],
    });
    const res = await request(sim.app).get('/v3/components/bad');
    expect(res.status).toBe(500);
    expect(res.body.detail).toMatch(/error_count/);
    expect(sim.validationErrors).toHaveLength(1);
    sim.validationErrors.length = 0;
    sim.state.deleteComponent('bad');
  });
});
