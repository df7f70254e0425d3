/** The simulator's GET /v3/components paging, as CFS pages: string-sorted ids, an exclusive after_id, limits. */
import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim } from './helpers';

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
