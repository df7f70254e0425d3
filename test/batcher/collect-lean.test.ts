/** Collect reads only what it needs: busy components by id only, full records for the others, so a large
 * pending set costs CFS less to list. */
import type { ComponentFilter } from '@cfs-batcher/shared';
import {
  LEAN_MAX_NOT_BUSY_SHARE,
  LEAN_PAGE_FACTOR,
  leanMatches,
  useLeanListing,
} from '../../batcher/src/phases/collect-source';
import { toBatchComponent } from '../../batcher/src/rules/component';
import { rawComponent } from './fixtures';
import {
  harnessLifecycle,
  fastOptions,
  ids,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

/** `n` pending components x1..xn of one configuration with `layers` layers, batches of 5. */
function startWith(n: number, layers: number): Promise<Harness> {
  return startHarness({
    seed: (sim) => {
      putConfig(sim, 'cfg', layers);
      fastOptions(sim, { batch_size: 5 });
      putComponents(sim, ids('x', n));
    },
  });
}

describe('useLeanListing', () => {
  it('lists in full until a collection has seen pending components, most of them known (busy or queued)', () => {
    expect(useLeanListing(0, 0)).toBe(false); // first cycle
    expect(useLeanListing(100, 0)).toBe(false);
    expect(useLeanListing(100, 100 - 100 * LEAN_MAX_NOT_BUSY_SHARE - 1)).toBe(false);
    expect(useLeanListing(100, 100 - 100 * LEAN_MAX_NOT_BUSY_SHARE)).toBe(true);
    expect(useLeanListing(100, 100)).toBe(true);
    expect(useLeanListing(100, 150)).toBe(true); // busy members no longer pending
  });
});

describe('leanMatches', () => {
  it('a queued snapshot stands while the lean record shows the same configuration name and tags', () => {
    const r = toBatchComponent(rawComponent('x1', { desired_config: 'cfg', tags: { bos_session: 'a' } }));
    const snap = r.ok ? r.component : null;
    expect(leanMatches({ id: 'x1', desired_config: 'cfg', tags: { bos_session: 'a' } }, snap)).toBe(true);
    expect(leanMatches({ id: 'x1', desired_config: 'other', tags: { bos_session: 'a' } }, snap)).toBe(false);
    expect(leanMatches({ id: 'x1', desired_config: 'cfg', tags: { bos_session: 'b' } }, snap)).toBe(false);
    expect(leanMatches({ id: 'x1', desired_config: 'cfg', tags: {} }, snap)).toBe(false);
    expect(leanMatches({ id: 'x1', desired_config: 'cfg' }, snap)).toBe(false);
    expect(leanMatches({ id: 'x1', desired_config: 'cfg', tags: { bos_session: 'a' } }, null)).toBe(false);
  });
});

/** The filters of every components list the batcher asked for, by cycle (and the page sizes, in `sizes`). */
function recordFilters(harness: Harness, sizes: Array<number | undefined> = []): ComponentFilter[] {
  const filters: ComponentFilter[] = [];
  const original = harness.client.listComponents.bind(harness.client);
  jest.spyOn(harness.client, 'listComponents').mockImplementation((f, o) => {
    filters.push(f);
    sizes.push(o?.pageSize);
    return original(f, o);
  });
  return filters;
}

const sessionMembers = (h: Harness): string[] => sessions(h.sim).flatMap((s) => (s.ansible.limit ?? '').split(','));

describe('collect at steady state', () => {
  it('lists without details once most pending components are busy, and reads new ones in full in the same cycle', async () => {
    h = await startWith(20, 2);
    const sizes: Array<number | undefined> = [];
    const filters = recordFilters(h, sizes);
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
    expect(filters).toEqual([{ enabled: true, status: 'pending', config_details: true, state_details: true }]);
    expect(sessions(h.sim)).toHaveLength(4);

    putComponents(h.sim, ['y1', 'y2']);
    filters.length = 0;
    const r2 = await h.batcher.runCycle();
    expect(r2.outcome).toBe('ok');
    expect(filters).toEqual([
      { enabled: true, status: 'pending', config_details: false, state_details: false },
      { enabled: true, status: 'pending', config_details: true, state_details: true, ids: ['y1', 'y2'] },
    ]);
    expect(r2.pendingSeen).toBe(22);
    // Lean pages hold LEAN_PAGE_FACTOR times the records of a full one (the server's default when unset)
    expect(sizes).toEqual([undefined, LEAN_PAGE_FACTOR * 1000, undefined]);
    // Filed with the batch key of their full record (2 pending layers), not yet sent (window 0 is strict >)
    const queued = h.batcher.state.book.all().filter((b) => b.sessionName === null);
    expect(queued.map((b) => [b.key, [...b.members.keys()]])).toEqual([['cfg:0,1:', ['y1', 'y2']]]);

    h.clock.advance(1000);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(5);
    const members = sessionMembers(h);
    expect(new Set(members).size).toBe(members.length); // no component in two sessions
    expect(members.sort()).toEqual([...ids('x', 20), 'y1', 'y2'].sort());
  });

  it('drops a queued member that stopped being pending, read by id or not', async () => {
    h = await startWith(10, 1);
    await h.batcher.runCycle();
    putComponents(h.sim, ['y1', 'y2']);
    await h.batcher.runCycle();
    expect(h.batcher.state.book.ownerOf('y2')?.sessionName).toBeNull();
    h.sim.state.putComponent({ ...h.sim.state.components.get('y2')!, enabled: false });
    const filters = recordFilters(h);
    h.clock.advance(1000);
    await h.batcher.runCycle();
    expect(filters[0]).toMatchObject({ config_details: false, state_details: false });
    expect(h.batcher.state.book.ownerOf('y2')).toBeUndefined();
    expect(sessionMembers(h)).toContain('y1');
    expect(sessionMembers(h)).not.toContain('y2');
  });

  it('lists queued components lean, and in full when the last collection saw many it did not know', async () => {
    h = await startWith(10, 1);
    await h.batcher.runCycle();
    fastOptions(h.sim, { batch_size: 50 }); // the new ones stay queued (not busy) for a while
    putComponents(h.sim, ids('y', 30));
    const filters = recordFilters(h);
    await h.batcher.runCycle(); // lean: 30 read by id (the last collection saw 10, all busy)
    expect(filters.map((f) => f.state_details)).toEqual([false, true]);
    filters.length = 0;
    await h.batcher.runCycle(); // 30 of 40 queued and unchanged: known, lean, nothing read by id
    expect(filters).toEqual([{ enabled: true, status: 'pending', config_details: false, state_details: false }]);
    filters.length = 0;
    putComponents(h.sim, ids('z', 20));
    await h.batcher.runCycle(); // the new ones read by id in the same cycle
    expect(filters).toEqual([
      { enabled: true, status: 'pending', config_details: false, state_details: false },
      { enabled: true, status: 'pending', config_details: true, state_details: true, ids: ids('z', 20) },
    ]);
    // The last collection saw 60 pending, 20 of them unknown until then: a wave on that scale is listed in full
    h.batcher.state.pendingSeen = 100;
    filters.length = 0;
    await h.batcher.runCycle();
    expect(filters[0]).toEqual({ enabled: true, status: 'pending', config_details: true, state_details: true });
  });
});

describe('a CFS that cannot list without details', () => {
  it('falls back to the full listing in the same cycle, and keeps to it once the full one worked', async () => {
    h = await startWith(10, 1);
    await h.batcher.runCycle();
    putComponents(h.sim, ['y1']);
    h.sim.faults.add({ match: 'GET /v3/components', action: { type: 'status', status: 500 }, scope: { times: 1 } });
    const filters = recordFilters(h);
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('ok');
    expect(filters.map((f) => f.state_details)).toEqual([false, true]);
    expect(h.batcher.state.book.ownerOf('y1')).toBeDefined();
    expect(logs.has(/^Listing components without details failed \(500 from CFS/, 'WARNING')).toBe(true);
    filters.length = 0;
    await h.batcher.runCycle();
    expect(filters.map((f) => f.state_details)).toEqual([true]);
  });

  it('fails the cycle as before when the full listing fails too (CFS trouble), and tries lean again later', async () => {
    h = await startWith(10, 1);
    await h.batcher.runCycle();
    h.sim.faults.add({ match: 'GET /v3/components', action: { type: 'status', status: 503 }, scope: { times: 2 } });
    expect((await h.batcher.runCycle()).outcome).toBe('error');
    const filters = recordFilters(h);
    await h.batcher.runCycle();
    expect(filters.map((f) => f.state_details)).toEqual([false]);
  });
});
