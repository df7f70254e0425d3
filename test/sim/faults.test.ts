import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, waitFor } from './helpers';

let sim: Simulator;
let clock = 1_000_000;
beforeEach(() => {
  clock = 1_000_000;
  sim = makeSim({ now: () => clock });
  addComponent(sim, 'x1');
});
afterEach(() => sim.close());

describe('fault actions', () => {
  it('status with a problem body, then back to normal after `times`', async () => {
    sim.faults.add({ match: 'GET /v3/sessions', action: { type: 'status', status: 503 }, scope: { times: 2 } });
    const r1 = await request(sim.app).get('/v3/sessions');
    expect(r1.status).toBe(503);
    expect(r1.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(r1.body).toMatchObject({ type: 'about:blank', status: 503 });
    expect((await request(sim.app).get('/v3/sessions')).status).toBe(503);
    expect((await request(sim.app).get('/v3/sessions')).status).toBe(200);
    expect((await request(sim.app).get('/v3/components')).status).toBe(200); // other routes untouched
  });

  it('status with an empty body and a 200 null body', async () => {
    sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'status', status: 500, body: 'empty' },
      scope: { times: 1 },
    });
    sim.faults.add({
      match: 'GET /v3/components',
      action: { type: 'status', status: 200, body: 'null' },
      scope: { times: 1 },
    });
    const post = await request(sim.app).post('/v3/sessions').send({ name: 's', configuration_name: 'cfg' });
    expect(post.status).toBe(500);
    expect(post.text).toBe('');
    expect(sim.state.sessions.size).toBe(0); // the fault answered before the handler ran
    const get = await request(sim.app).get('/v3/components');
    expect(get.status).toBe(200);
    expect(get.text).toBe('null');
  });

  it('custom JSON body (e.g. a malformed record)', async () => {
    sim.faults.add({
      match: 'GET /v3/components',
      action: { type: 'status', status: 200, body: { components: [{ id: 7 }], next: null } },
    });
    expect((await request(sim.app).get('/v3/components')).body).toEqual({ components: [{ id: 7 }], next: null });
  });

  it('invalid JSON', async () => {
    sim.faults.add({ match: 'GET /v3/components', action: { type: 'invalid-json' } });
    const res = await request(sim.app)
      .get('/v3/components')
      .buffer(true)
      .parse((r, cb) => {
        let t = '';
        r.on('data', (c: Buffer) => (t += c.toString()));
        r.on('end', () => cb(null, t));
      });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(() => JSON.parse(res.body as string)).toThrow();
  });

  it('every Nth request', async () => {
    sim.faults.add({ match: 'GET /v3/components/{id}', action: { type: 'status', status: 500 }, scope: { every: 3 } });
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await request(sim.app).get('/v3/components/x1')).status);
    expect(codes).toEqual([200, 200, 500, 200, 200, 500]);
  });

  it('time window: durationMs from when the rule is added, and from/until', async () => {
    sim.faults.add({ match: '* /v3/options', action: { type: 'status', status: 502 }, scope: { durationMs: 1000 } });
    expect((await request(sim.app).get('/v3/options')).status).toBe(502);
    expect((await request(sim.app).patch('/v3/options').send({})).status).toBe(502);
    clock += 1001;
    expect((await request(sim.app).get('/v3/options')).status).toBe(200);
    sim.faults.add({
      match: 'GET /v3/options',
      action: { type: 'status', status: 504 },
      scope: { from: clock + 500, until: clock + 600 },
    });
    expect((await request(sim.app).get('/v3/options')).status).toBe(200);
    clock += 550;
    expect((await request(sim.app).get('/v3/options')).status).toBe(504);
  });

  it('regex match and object form', async () => {
    sim.faults.add({
      match: { method: 'GET', pathRegex: '^/v3/(sessions|components)$' },
      action: { type: 'status', status: 418 },
    });
    expect((await request(sim.app).get('/v3/sessions')).status).toBe(418);
    expect((await request(sim.app).get('/v3/components')).status).toBe(418);
    expect((await request(sim.app).get('/v3/options')).status).toBe(200);
  });

  it('latency delays the answer but it still arrives', async () => {
    sim.faults.add({ match: 'GET /v3/options', action: { type: 'latency', ms: 30 }, scope: { times: 1 } });
    const res = await request(sim.app).get('/v3/options');
    expect(res.status).toBe(200);
    expect(res.body.default_page_size).toBe(1000);
    expect(sim.stats.snapshot().byRouteStatus['GET /v3/options 200']).toBe(1);
  });

  it('rejects a malformed rule with the reason', async () => {
    expect(() => sim.faults.add({ match: 'GET /x', action: { type: 'explode' } } as never)).toThrow(
      /invalid fault rule: action/,
    );
    const res = await request(sim.app)
      .post('/__sim/faults')
      .send({ match: 'GET /x', action: { type: 'status', status: 99 } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/status/);
  });

  it('control API: add, list, clear', async () => {
    const add = await request(sim.app)
      .post('/__sim/faults')
      .send({ match: 'GET /v3/sessions', action: { type: 'status', status: 503 } });
    expect(add.status).toBe(201);
    expect((await request(sim.app).get('/__sim/faults')).body.faults).toHaveLength(1);
    expect((await request(sim.app).get('/v3/sessions')).status).toBe(503);
    await request(sim.app).delete('/__sim/faults');
    expect((await request(sim.app).get('/v3/sessions')).status).toBe(200);
  });
});

describe('socket-level faults (real listener)', () => {
  let url: string;
  beforeEach(async () => {
    url = (await sim.listen(0)).url;
  });

  it('hang never answers (the client gives up) and close() still finishes', async () => {
    sim.faults.add({ match: 'GET /v3/sessions', action: { type: 'hang' }, scope: { times: 1 } });
    await expect(fetch(`${url}/sessions`, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect((await fetch(`${url}/sessions`)).status).toBe(200);
  });

  it('hang is released by close()', async () => {
    sim.faults.add({ match: 'GET /v3/sessions', action: { type: 'hang' } });
    const pending = fetch(`${url}/sessions`).then(
      () => 'answered',
      () => 'failed',
    );
    await waitFor(() => sim.faults.hangingCount === 1);
    await sim.close();
    expect(await pending).toBe('failed');
  });

  it('reset destroys the socket', async () => {
    sim.faults.add({ match: 'GET /v3/components', action: { type: 'reset' }, scope: { times: 1 } });
    await expect(fetch(`${url}/components`)).rejects.toThrow();
    expect((await fetch(`${url}/components`)).status).toBe(200);
  });

  it('outage: connection refused, then the same port answers again', async () => {
    await sim.startOutage();
    const err = await fetch(`${url}/options`).then(
      () => null,
      (e: Error & { cause?: { code?: string } }) => e.cause?.code,
    );
    expect(err).toBe('ECONNREFUSED');
    await sim.endOutage();
    expect((await fetch(`${url}/options`)).status).toBe(200);
  });

  it('outage via the control API with a duration', async () => {
    const res = await fetch(`${url.replace(/\/v3$/, '')}/__sim/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"durationMs":100}',
    });
    expect(res.status).toBe(202);
    await waitFor(
      () =>
        fetch(`${url}/options`).then(
          () => false,
          () => true,
        ),
      3000,
    );
    await waitFor(
      () =>
        fetch(`${url}/options`).then(
          (r) => r.status === 200,
          () => false,
        ),
      3000,
    );
  });
});

describe('stats', () => {
  it('counts by method + route template and status, ignoring /__sim', async () => {
    await request(sim.app).get('/v3/components/x1');
    await request(sim.app).get('/v3/components/nope');
    await request(sim.app).get('/v3/components?limit=1');
    await request(sim.app).get('/__sim/stats');
    const s = (await request(sim.app).get('/__sim/stats')).body;
    expect(s.total).toBe(3);
    expect(s.byRoute).toEqual({ 'GET /v3/components/{component_id}': 2, 'GET /v3/components': 1 });
    expect(s.byRouteStatus['GET /v3/components/{component_id} 404']).toBe(1);
    await request(sim.app).delete('/__sim/stats');
    expect((await request(sim.app).get('/__sim/stats')).body.total).toBe(0);
  });

  it('counts the response body bytes a client pulls, by route, ignoring /__sim', async () => {
    const a = await request(sim.app).get('/v3/components?config_details=true&state_details=true');
    const b = await request(sim.app).get('/v3/components/nope');
    await request(sim.app).get('/__sim/stats');
    const s = (await request(sim.app).get('/__sim/stats')).body;
    expect(s.bytesByRoute).toEqual({
      'GET /v3/components': a.text.length,
      'GET /v3/components/{component_id}': b.text.length,
    });
    expect(s.bytes).toBe(a.text.length + b.text.length);
    await request(sim.app).delete('/__sim/stats');
    expect((await request(sim.app).get('/__sim/stats')).body).toMatchObject({ bytes: 0, bytesByRoute: {} });
  });

  it('counts the most requests of a route in progress at once', async () => {
    sim.faults.add({ match: 'GET /v3/components/*', action: { type: 'latency', ms: 200 } });
    const held = Promise.all(['a', 'b', 'c'].map((id) => request(sim.app).get(`/v3/components/${id}`)));
    await held;
    await request(sim.app).get('/v3/components/d'); // alone: the peak stays 3
    expect(sim.stats.peakInFlight('GET /v3/components/{component_id}')).toBe(3);
    expect((await request(sim.app).get('/__sim/stats')).body.maxInFlightByRoute).toEqual({
      'GET /v3/components/{component_id}': 3,
    });
  });
});
