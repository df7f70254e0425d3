/** The invariant checker itself: each rule fires on a history that breaks it, and only then. */
import { checkInvariants, commonTags, type SessionRecord } from '../helpers/invariants';

const snap = (
  over: Partial<{
    desired_config: string;
    pending_layers: string;
    latest_status: string;
    tags: Record<string, string>;
  }> = {},
) => ({
  desired_config: 'cfg',
  pending_layers: '0',
  latest_status: '',
  tags: {},
  ...over,
});

function session(
  name: string,
  hosts: string[],
  created: number,
  end: number | null,
  over: Partial<SessionRecord> = {},
): SessionRecord {
  return {
    name,
    configuration: 'cfg',
    configuration_limit: '0',
    hosts,
    tags: {},
    created_ms: created,
    completed_ms: end,
    deleted_ms: null,
    members: Object.fromEntries(hosts.map((h) => [h, snap()])),
    ...over,
  };
}

describe('checkInvariants', () => {
  it('accepts sequential sessions for the same component', () => {
    const v = checkInvariants([session('a', ['x1', 'x2'], 0, 10), session('b', ['x1'], 10, null)], { maxBatchSize: 2 });
    expect(v).toEqual([]);
  });

  it('flags a component in two active sessions, including one that never ended', () => {
    const v = checkInvariants([session('a', ['x1'], 0, null), session('b', ['x2'], 1, 2), session('c', ['x1'], 5, 6)], {
      maxBatchSize: 5,
    });
    expect(v.map((x) => [x.rule, x.session])).toEqual([['overlap', 'c']]);
  });

  it('treats a deleted session as ended at its delete', () => {
    const a = session('a', ['x1'], 0, null, { deleted_ms: 4 });
    expect(checkInvariants([a, session('b', ['x1'], 4, null)], { maxBatchSize: 1 })).toEqual([]);
    expect(checkInvariants([a, session('b', ['x1'], 3, null)], { maxBatchSize: 1 }).map((x) => x.rule)).toEqual([
      'overlap',
    ]);
  });

  it('finds an overlap hidden behind a short session (sweep keeps the longest end)', () => {
    const v = checkInvariants(
      [session('long', ['x'], 0, 100), session('short', ['x'], 100, 101), session('late', ['x'], 50, 60)],
      { maxBatchSize: 1 },
    );
    expect(v.map((x) => x.session)).toEqual(['late']);
  });

  it('flags batch size, empty sessions and duplicate members', () => {
    const v = checkInvariants(
      [session('big', ['a', 'b', 'c'], 0, 1), session('none', [], 0, 1), session('dup', ['d', 'd'], 0, 1)],
      { maxBatchSize: 2 },
    );
    expect(v.map((x) => x.rule).sort()).toEqual(['batch_size', 'duplicate_member', 'empty']);
  });

  it('flags members that differ in desired config, pending layers or latest status', () => {
    const s = session('mixed', ['a', 'b'], 0, 1);
    s.members = { a: snap({ desired_config: 'other' }), b: snap({ pending_layers: '0,1', latest_status: 'failed' }) };
    const rules = checkInvariants([s], { maxBatchSize: 5 })
      .map((x) => x.rule)
      .sort();
    expect(rules).toEqual(['desired_config', 'latest_status', 'pending_layers']);
  });

  it('requires the tags to be exactly the shared ones', () => {
    const members = { a: snap({ tags: { k: '1', only: 'a' } }), b: snap({ tags: { k: '1', z: '2' } }) };
    expect(
      checkInvariants([session('ok', ['a', 'b'], 0, 1, { tags: { k: '1' }, members })], { maxBatchSize: 5 }),
    ).toEqual([]);
    expect(
      checkInvariants([session('extra', ['a', 'b'], 0, 1, { tags: { k: '1', only: 'a' }, members })], {
        maxBatchSize: 5,
      }).map((x) => x.rule),
    ).toEqual(['tags']);
    expect(
      checkInvariants([session('less', ['a', 'b'], 0, 1, { tags: {}, members })], { maxBatchSize: 5 }).map(
        (x) => x.rule,
      ),
    ).toEqual(['tags']);
  });

  it('reports missing snapshots only when asked to', () => {
    const s = session('bare', ['a'], 0, 1, { members: undefined });
    expect(checkInvariants([s], { maxBatchSize: 1 })).toEqual([]);
    expect(checkInvariants([s], { maxBatchSize: 1, requireMembers: true }).map((x) => x.rule)).toEqual([
      'missing_member_snapshot',
    ]);
  });

  it('commonTags of no members is empty', () => {
    expect(commonTags([])).toEqual({});
  });
});
