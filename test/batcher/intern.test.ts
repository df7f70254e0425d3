/** Sharing values between component snapshots must not change any snapshot, and the pool must stay bounded. */
import fc from 'fast-check';
import { InternPool, toBatchComponent, type ComponentResult } from '@cfs-batcher/batcher';
import { layer, rawComponent } from './fixtures';

const ok = (r: ComponentResult) => {
  if (!r.ok) throw new Error(r.reason);
  return r.component;
};

describe('InternPool', () => {
  it('hands out one instance per value and forgets what a whole generation did not use', () => {
    const pool = new InternPool();
    const a = pool.value('k', 'x', () => ({ v: 1 }));
    expect(pool.value('k', 'x', () => ({ v: 2 }))).toBe(a);
    expect(pool.value('other', 'x', () => ({ v: 3 }))).not.toBe(a);
    pool.rotate();
    expect(pool.value('k', 'x', () => ({ v: 4 }))).toBe(a); // used in this generation: kept
    pool.rotate();
    pool.rotate();
    expect(pool.value('k', 'x', () => ({ v: 5 }))).toEqual({ v: 5 }); // unused for a generation: gone
  });

  it('stops remembering beyond its bound but still answers', () => {
    const pool = new InternPool(3);
    for (let i = 0; i < 10; i++) expect(pool.str(`s${i}`)).toBe(`s${i}`);
    expect(pool.size).toBeLessThanOrEqual(3);
  });
});

describe('toBatchComponent with a pool', () => {
  const record = fc.record({
    id: fc.constantFrom('x1', 'x2', 'x3'),
    config: fc.constantFrom('cfg-a', 'cfg-b'),
    statuses: fc.array(fc.constantFrom('pending', 'applied', 'failed'), { minLength: 1, maxLength: 3 }),
    tags: fc.dictionary(fc.constantFrom('bos_session', 'rack', '__proto__'), fc.string({ maxLength: 3 }), {
      maxKeys: 2,
    }),
    latest: fc.constantFrom('applied', 'failed', ''),
  });

  it('gives the same component as without one, sharing the repeated parts', () => {
    const pool = new InternPool();
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), (recs) => {
        pool.rotate();
        for (const r of recs) {
          const raw = rawComponent(r.id, {
            desired_config: r.config,
            tags: JSON.parse(JSON.stringify(r.tags)) as Record<string, string>,
            desired_state: r.statuses.map((s, i) => layer(i, s)),
            state: r.latest
              ? [{ clone_url: 'u', playbook: 'p', commit: 'c', status: r.latest, last_updated: 't' }]
              : [],
          });
          const plain = toBatchComponent(raw, false);
          const shared = toBatchComponent(raw, false, pool);
          expect(shared).toStrictEqual(plain);
          // a second record with the same content shares every non-id part
          const again = toBatchComponent(JSON.parse(JSON.stringify(raw)), false, pool);
          if (shared.ok && again.ok) {
            expect(again.component.pendingLayers).toBe(shared.component.pendingLayers);
            if (Object.keys(shared.component.tags).length > 0) expect(again.component.tags).toBe(shared.component.tags);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('returns frozen shared parts, so one component cannot change another', () => {
    const c = ok(
      toBatchComponent(
        rawComponent('x1', { tags: { rack: 'r1' }, desired_state: [layer(0, 'pending')] as never }),
        true,
        new InternPool(),
      ),
    );
    expect(Object.isFrozen(c.tags)).toBe(true);
    expect(Object.isFrozen(c.pendingLayers)).toBe(true);
    expect(Object.isFrozen(c.pendingLayers[0])).toBe(true);
  });
});
