import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import './helpers';

describe('scale: 50k pending components over HTTP', () => {
  let sim: Simulator;
  let url: string;
  beforeAll(async () => {
    sim = createSimulator({ generate: { components: 50_000, configurations: 3 }, operator: { paused: true } });
    url = (await sim.listen(0)).url;
  });
  afterAll(() => sim.close());

  it('pages every pending component (limit 1000) with no duplicates', async () => {
    const seen = new Set<string>();
    let pages = 0;
    let query: Record<string, unknown> | null = {
      enabled: 'True',
      status: 'pending',
      config_details: 'True',
      state_details: 'True',
      limit: 1000,
    };
    const started = Date.now();
    while (query && pages < 60) {
      const qs = new URLSearchParams(
        Object.entries(query)
          .filter(([, v]) => v !== null)
          .map(([k, v]): [string, string] => [k, String(v)]),
      );
      const res = await fetch(`${url}/components?${qs.toString()}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { components: Array<{ id: string }>; next: Record<string, unknown> | null };
      for (const c of body.components) seen.add(c.id);
      pages++;
      query = body.next;
    }
    const elapsed = Date.now() - started;
    console.log(`paged 50000 pending components in ${pages} pages (limit 1000) in ${elapsed} ms`);
    expect(pages).toBe(50);
    expect(seen.size).toBe(50_000);
    expect(sim.stats.get('GET /v3/components')).toBe(50);
  });
});
