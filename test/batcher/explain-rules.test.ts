/** The explain rules without I/O: formatting, which hold is the binding one, answers from a CFS record. */
import type { CfsComponent } from '@cfs-batcher/shared';
import {
  duration,
  explainFromCfs,
  explainFromMemory,
  layersText,
  newState,
  toBatchComponent,
  whenAt,
  type BatcherState,
} from '@cfs-batcher/batcher';

const T0 = 1_700_000_000_000;
const at = (now: number) => ({ now, offset: 0 });

function raw(id: string, over: Partial<CfsComponent> = {}): CfsComponent {
  return {
    id,
    desired_config: 'cfg',
    error_count: 0,
    enabled: true,
    configuration_status: 'pending',
    desired_state: [
      { clone_url: 'https://vcs/l0.git', playbook: 'site.yml', commit: 'a'.repeat(40), status: 'pending' },
    ],
    state: [],
    tags: {},
    ...over,
  };
}

function filed(s: BatcherState, id: string, now = T0): void {
  const r = toBatchComponent(raw(id), true);
  if (!r.ok) throw new Error(r.reason);
  s.book.add(r.component, s.options.batch_size, now);
}

describe('text', () => {
  it.each([
    ['0,1,2', 'layers 0-2'],
    ['0,2,3,5', 'layers 0,2-3,5'],
    ['1', 'layer 1'],
    ['', 'all layers'],
  ])('layersText(%j) = %j', (limit, text) => expect(layersText(limit)).toBe(text));

  it('durations and due times', () => {
    expect(duration(42_000)).toBe('42 s');
    expect(duration(125_000)).toBe('2 min 5 s');
    expect(duration(7_200_000)).toBe('2 h 0 min');
    expect(whenAt(T0, T0 + 5, 0)).toMatch(/ UTC \(now\)$/);
    expect(whenAt(T0 + 90_000, T0, 0)).toMatch(/ UTC \(in 90 s\)$/);
  });
});

describe('from memory', () => {
  it('an id the memory does not hold: null (CFS is asked)', () => {
    expect(explainFromMemory(newState(), 'x1', at(T0))).toBeNull();
  });

  it('an open window and a backoff: the one that ends later is the answer', () => {
    const s = newState();
    s.options = { ...s.options, batch_window: 60, batch_size: 25 };
    filed(s, 'x1');
    s.backoff = { ...s.backoff, currentS: 30, startMs: T0 }; // ends before the window
    expect(explainFromMemory(s, 'x1', at(T0 + 1000))!.state).toBe('waiting_for_batch');
    s.backoff = { ...s.backoff, currentS: 120, startMs: T0 }; // outlasts it
    const a = explainFromMemory(s, 'x1', at(T0 + 1000))!;
    expect(a.state).toBe('held');
    expect(a.reason).toContain('halted for 120 s');
  });

  it('an open window while pacing holds ready batches: still waiting for the window, and says what holds it next', () => {
    const s = newState();
    s.options = { ...s.options, batch_window: 60, batch_size: 25 };
    filed(s, 'x1');
    const open = explainFromMemory(s, 'x1', at(T0 + 1000))!;
    expect(open.state).toBe('waiting_for_batch');
    expect(open.reason).not.toContain('held');
    expect(open).not.toHaveProperty('then_held');
    s.pacing.pendingSessions = 40;
    s.pacing.limited = { why: 'pending_cap', reason: '40 batcher sessions are pending in CFS (cap 40)', until: null };
    const a = explainFromMemory(s, 'x1', at(T0 + 1000))!;
    expect(a.state).toBe('waiting_for_batch');
    expect(a.reason).toMatch(/window ends.*Ready batches are held at the moment: 40 batcher sessions are pending/);
    expect(a).toMatchObject({ then_held: { why: 'pacing' } });
  });

  it('a session that ended with completion writes left: in_session, how many writes, when they are retried', () => {
    const s = newState();
    s.options = { ...s.options, batch_size: 1 };
    filed(s, 'x1');
    const b = s.book.ownerOf('x1')!;
    s.book.markActive(b, 'batcher-1', T0);
    s.completions.set(b.id, {
      batch: b,
      success: false,
      result: 'failed',
      patches: [{ id: 'x1', patch: { error_count: 1 } }],
    });
    s.nextCycleAt = T0 + 10_000;
    const a = explainFromMemory(s, 'x1', at(T0 + 4000))!;
    expect(a.state).toBe('in_session');
    expect(a.reason).toMatch(
      /^Session batcher-1 ended \(failed\); its completion writes to CFS \(1 left\) are retried in the next cycle, at .* \(in 6 s\)/,
    );
    expect(a.completion).toEqual({ result: 'failed', writes_left: 1 });
  });
});

describe('from a CFS record', () => {
  const s = newState();

  it('unconfigured with no batcher session', () => {
    const a = explainFromCfs(s, 'x1', raw('x1', { configuration_status: 'unconfigured' }), at(T0));
    expect(a).toMatchObject({ state: 'not_pending', last_session: null, source: 'cfs' });
    expect(a.reason).toBe('Not pending: CFS reports it unconfigured, so there is nothing for the batcher to do.');
  });

  it("the component's own retry_policy; -1 is unlimited", () => {
    const mine = explainFromCfs(
      s,
      'x1',
      raw('x1', { configuration_status: 'failed', error_count: 5, retry_policy: 5 }),
      at(T0),
    );
    expect(mine).toMatchObject({
      state: 'not_batched',
      why: 'retry_limit',
      retry_policy: 5,
      retry_policy_from: 'component',
    });
    expect(mine.reason).toContain("reached the retry limit 5 from the component's retry_policy");
    const unlimited = explainFromCfs(
      s,
      'x1',
      raw('x1', { configuration_status: 'failed', error_count: 9, retry_policy: -1 }),
      at(T0),
    );
    expect(unlimited.state).toBe('not_pending');
  });

  it('pending: an id no limit can carry, a record collect would skip', () => {
    expect(explainFromCfs(s, 'x1,x2', raw('x1,x2'), at(T0))).toMatchObject({ state: 'not_batched', why: 'bad_id' });
    const bad = raw('x1', { desired_state: [{ clone_url: 'u', commit: 'c', status: 'pending' }] as never });
    expect(explainFromCfs(s, 'x1', bad, at(T0))).toMatchObject({
      state: 'not_batched',
      why: 'invalid_record',
      problem: 'desired_state[0] has no playbook',
    });
  });
});
