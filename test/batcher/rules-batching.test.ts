/** Batching rules: when a batch is ready to send, how members are keyed, moved, pruned and tagged, and its bounds. */
import fc from 'fast-check';
import { BatchBook, isReadyToSend, sharedTags } from '@cfs-batcher/batcher';
import { comp } from './fixtures';

describe('batching', () => {
  it('sends a full batch at once and a partial one only after the window (strict >)', () => {
    const book = new BatchBook();
    book.add(comp('a'), 2, 1000);
    const [b] = book.all();
    expect(isReadyToSend(b!, 2, 60, 1000)).toBe(false);
    expect(isReadyToSend(b!, 2, 60, 61_000)).toBe(false);
    expect(isReadyToSend(b!, 2, 60, 61_001)).toBe(true);
    book.add(comp('b'), 2, 1000);
    expect(isReadyToSend(b!, 2, 60, 1000)).toBe(true);
  });

  it('keys batches by config, pending layers and latest status', () => {
    const book = new BatchBook();
    book.add(comp('a'), 25, 0);
    book.add(comp('b', { desired_config: 'other' }), 25, 0);
    book.add(comp('c', { state: [{ clone_url: 'u', playbook: 'p', commit: 'c', status: 'failed' }] }), 25, 0);
    book.add(comp('d'), 25, 0);
    expect(book.all().map((b) => [...b.members.keys()].sort())).toEqual([['a', 'd'], ['b'], ['c']]);
  });

  it('never adds a member of an active batch elsewhere and moves a changed queued member', () => {
    const book = new BatchBook();
    book.add(comp('a'), 25, 0);
    const [b] = book.all();
    expect(book.add(comp('a', { desired_config: 'new' }), 25, 0)).toBe('moved');
    expect(book.all()).toHaveLength(1);
    expect(book.all()[0]!.configName).toBe('new');
    expect(b!.members.size).toBe(0);
    const [n] = book.all();
    book.markActive(n!, 'batcher-x', 0);
    expect(book.add(comp('a'), 25, 0)).toBe('busy');
  });

  it('registers rebuilt members as busy', () => {
    const book = new BatchBook();
    book.addRebuilt('batcher-1', 'cfg', '0', new Map([['a', null]]), 0);
    expect(book.add(comp('a'), 25, 0)).toBe('busy');
    expect(book.all()).toHaveLength(1);
  });

  it('prunes queued members that are no longer pending', () => {
    const book = new BatchBook();
    book.add(comp('a'), 25, 0);
    book.add(comp('b'), 25, 0);
    expect(book.prune(new Set(['b']))).toEqual(['a']);
    expect(book.ownerOf('a')).toBeUndefined();
    expect([...book.all()[0]!.members.keys()]).toEqual(['b']);
  });

  it('shares only tags with equal values on every member', () => {
    expect(sharedTags([{ tags: { a: '1', b: '2' } }, { tags: { a: '1', b: '3' } }])).toEqual({ a: '1' });
    expect(sharedTags([{ tags: { a: '1' } }, { tags: {} }])).toBeUndefined();
    expect(sharedTags([])).toBeUndefined();
  });

  it('property: batches stay within batch_size, members share the key, no component is in two batches', () => {
    const arbComp = fc.record({
      id: fc.integer({ min: 0, max: 40 }).map((n) => `x${n}`),
      cfg: fc.constantFrom('c1', 'c2'),
      failed: fc.boolean(),
      tag: fc.constantFrom('t1', 't2', undefined),
    });
    fc.assert(
      fc.property(fc.array(arbComp, { maxLength: 120 }), fc.integer({ min: 1, max: 6 }), (items, size) => {
        const book = new BatchBook();
        for (const it of items) {
          book.add(
            comp(it.id, {
              desired_config: it.cfg,
              state: it.failed ? [{ clone_url: 'u', playbook: 'p', commit: 'c', status: 'failed' }] : [],
              tags: it.tag ? { k: it.tag } : {},
            }),
            size,
            0,
          );
        }
        const seen = new Set<string>();
        for (const b of book.all()) {
          expect(b.members.size).toBeGreaterThan(0);
          expect(b.members.size).toBeLessThanOrEqual(size);
          for (const [id, m] of b.members) {
            expect(m!.batchKey).toBe(b.key);
            expect(seen.has(id)).toBe(false);
            expect(book.ownerOf(id)).toBe(b);
            seen.add(id);
          }
          const tags = sharedTags(b.members.values()) ?? {};
          const members = [...b.members.values()];
          for (const [k, v] of Object.entries(tags)) for (const m of members) expect(m!.tags[k]).toBe(v);
          const allKeys = new Set(members.flatMap((m) => Object.keys(m!.tags)));
          for (const k of allKeys) {
            const everyEqual = members.every((m) => m!.tags[k] !== undefined && m!.tags[k] === members[0]!.tags[k]);
            expect(k in tags).toBe(everyEqual);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
