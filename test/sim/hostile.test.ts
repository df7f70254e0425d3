/** The hostile CFS faults: lying lookups, lost answers after commit, odd 201 bodies, missing options. */
import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim } from './helpers';

let sim: Simulator;
beforeEach(() => {
  sim = makeSim();
  for (const id of ['x1', 'x2']) addComponent(sim, id);
});
afterEach(() => sim.close());

const body = (name: string) => ({
  name,
  configuration_name: 'cfg',
  ansible_limit: 'x1,x2',
  target: { definition: 'dynamic' },
});

describe('lying lookup: GET /v3/sessions/{name} answers 404 for a session that exists', () => {
  it('with a problem body, by session-name pattern and count; the list still shows the session', async () => {
    await request(sim.app).post('/v3/sessions').send(body('batcher-a')).expect(201);
    await request(sim.app).post('/v3/sessions').send(body('other-b')).expect(201);
    sim.faults.add({
      match: 'GET /v3/sessions/batcher-*',
      action: {
        type: 'status',
        status: 404,
        title: 'Session not found.',
        detail: 'Session batcher-a could not be found',
      },
      scope: { times: 2 },
    });
    const r1 = await request(sim.app).get('/v3/sessions/batcher-a');
    expect(r1.status).toBe(404);
    expect(r1.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(r1.body).toMatchObject({
      status: 404,
      title: 'Session not found.',
      detail: 'Session batcher-a could not be found',
    });
    expect((await request(sim.app).get('/v3/sessions/other-b')).status).toBe(200); // pattern does not match
    expect((await request(sim.app).get('/v3/sessions')).body.sessions.map((s: { name: string }) => s.name)).toEqual([
      'batcher-a',
      'other-b',
    ]);
    expect((await request(sim.app).get('/v3/sessions/batcher-a')).status).toBe(404); // second of two
    expect((await request(sim.app).get('/v3/sessions/batcher-a')).status).toBe(200); // used up
  });

  it('without a body, and with an HTML page (an ingress answering)', async () => {
    await request(sim.app).post('/v3/sessions').send(body('batcher-a')).expect(201);
    sim.faults.add({
      match: 'GET /v3/sessions/{name}',
      action: { type: 'status', status: 404, body: 'empty' },
      scope: { times: 1 },
    });
    sim.faults.add({
      match: 'GET /v3/sessions/{name}',
      action: { type: 'status', status: 404, body: 'html' },
      scope: { times: 1 },
    });
    const empty = await request(sim.app).get('/v3/sessions/batcher-a');
    expect([empty.status, empty.text]).toEqual([404, '']);
    const html = await request(sim.app).get('/v3/sessions/batcher-a');
    expect(html.status).toBe(404);
    expect(html.headers['content-type']).toMatch(/text\/html/);
    expect(sim.state.sessions.has('batcher-a')).toBe(true);
  });
});

describe('phase after: the POST commits, then the answer is replaced', () => {
  it.each([404, 500, 502, 503])('committed session, client sees %i', async (status) => {
    sim.faults.add({
      match: 'POST /v3/sessions',
      phase: 'after',
      action: { type: 'status', status },
      scope: { times: 1 },
    });
    const res = await request(sim.app).post('/v3/sessions').send(body('batcher-lost'));
    expect(res.status).toBe(status);
    expect(res.body.status).toBe(status);
    expect(sim.state.sessions.get('batcher-lost')?.status.session.status).toBe('pending');
    expect(sim.history.get('batcher-lost')?.fault).toBe('after:status');
    // The retry of the same name proves it: 409.
    expect((await request(sim.app).post('/v3/sessions').send(body('batcher-lost'))).status).toBe(409);
  });

  it('a 201 whose body is not a session document: {} and HTML', async () => {
    sim.faults.add({
      match: 'POST /v3/sessions',
      phase: 'after',
      action: { type: 'status', status: 201, body: {} },
      scope: { times: 1 },
    });
    sim.faults.add({
      match: 'POST /v3/sessions',
      phase: 'after',
      action: { type: 'status', status: 201, body: 'html' },
      scope: { times: 1 },
    });
    const a = await request(sim.app).post('/v3/sessions').send(body('batcher-a'));
    expect([a.status, a.body]).toEqual([201, {}]);
    const b = await request(sim.app)
      .post('/v3/sessions')
      .send({ ...body('batcher-b'), ansible_limit: 'x3' });
    expect(b.status).toBe(201);
    expect(b.text).toMatch(/<html>/);
    expect([...sim.state.sessions.keys()].sort()).toEqual(['batcher-a', 'batcher-b']);
  });

  it('phase before (the default) commits nothing', async () => {
    sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 1 } });
    expect((await request(sim.app).post('/v3/sessions').send(body('batcher-a'))).status).toBe(503);
    expect(sim.state.sessions.size).toBe(0);
  });
});

describe('GET /v3/options with keys missing', () => {
  it('200 {} (before the handler)', async () => {
    await request(sim.app).patch('/v3/options').send({ batch_window: 10, batch_size: 25 }).expect(200);
    sim.faults.add({
      match: 'GET /v3/options',
      action: { type: 'status', status: 200, body: {} },
      scope: { times: 1 },
    });
    expect((await request(sim.app).get('/v3/options')).body).toEqual({});
    expect((await request(sim.app).get('/v3/options')).body).toMatchObject({ batch_window: 10, batch_size: 25 });
  });

  it('omit-keys: the real answer without some keys, content-length right', async () => {
    await request(sim.app).patch('/v3/options').send({ batch_window: 10, batch_size: 25 }).expect(200);
    sim.faults.add({
      match: 'GET /v3/options',
      action: { type: 'omit-keys', keys: ['batch_window', 'default_page_size'] },
      scope: { times: 1 },
    });
    const res = await request(sim.app).get('/v3/options');
    expect(res.status).toBe(200);
    expect(res.body.batch_size).toBe(25);
    expect(res.body).not.toHaveProperty('batch_window');
    expect(res.body).not.toHaveProperty('default_page_size');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(sim.state.options.batch_window).toBe(10); // stored options untouched
  });

  it('rejects omit-keys without keys', () => {
    expect(() => sim.faults.add({ match: 'GET /v3/options', action: { type: 'omit-keys', keys: [] } })).toThrow(/keys/);
  });
});

describe('random schedule', () => {
  it('probability with a seed fires on a repeatable subset of matching requests', async () => {
    const run = async (): Promise<number[]> => {
      sim.faults.clear();
      sim.faults.add({
        match: 'GET /v3/components/{id}',
        action: { type: 'status', status: 500 },
        scope: { probability: 0.3, seed: 42 },
      });
      const codes: number[] = [];
      for (let i = 0; i < 40; i++) codes.push((await request(sim.app).get('/v3/components/x1')).status);
      return codes;
    };
    const a = await run();
    const fired = a.filter((c) => c === 500).length;
    expect(fired).toBeGreaterThan(0);
    expect(fired).toBeLessThan(40);
    expect(await run()).toEqual(a);
  });
});
