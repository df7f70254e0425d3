/** The simulator's component writes beyond PATCH of one: PUT one, PUT many (hwsync), bulk PATCH (BOS), DELETE. */
import request from 'supertest';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim } from './helpers';

let sim: Simulator;
beforeEach(() => {
  sim = makeSim();
});
afterEach(() => sim.close());

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
