/** What a finished session leads to: the patches for its members, and the backoff after repeated failures. */
import {
  RECENT_SESSIONS_SIZE,
  decideCompletion,
  initialBackoff,
  isBackingOff,
  recordCompletions,
  toBatchComponent,
  type BatchComponent,
} from '@cfs-batcher/batcher';
import { COMMIT_B, comp, layer, rawComponent } from './fixtures';

describe('backoff', () => {
  const fail = (n: number) => Array<boolean>(n).fill(false);

  it('halts after 20 failures: 60 s, doubling to the cap, and a success resumes', () => {
    let s = initialBackoff();
    let r = recordCompletions(s, fail(19), 0, 200);
    expect(r.event).toBeNull();
    r = recordCompletions(r.state, fail(1), 0, 200);
    expect(r.event).toEqual({ kind: 'halted', seconds: 60 });
    s = r.state;
    expect(isBackingOff(s, 59_999)).toBe(true);
    expect(isBackingOff(s, 60_000)).toBe(false);
    expect(recordCompletions(s, fail(1), 30_000, 200).event).toBeNull(); // still within the halt
    r = recordCompletions(s, fail(1), 60_000, 200);
    expect(r.event).toEqual({ kind: 'halted', seconds: 120 });
    r = recordCompletions(r.state, fail(1), 180_000, 200);
    expect(r.event).toEqual({ kind: 'halted', seconds: 200 });
    r = recordCompletions(r.state, [true], 190_000, 200);
    expect(r.event).toEqual({ kind: 'resumed' });
    expect(isBackingOff(r.state, 190_000)).toBe(false);
    expect(r.state.recent).toHaveLength(RECENT_SESSIONS_SIZE);
    // 19 earlier failures remain: 19 more failures are not enough, the 20th is
    expect(recordCompletions(r.state, fail(19), 200_000, 200).event).toBeNull();
    expect(recordCompletions(r.state, fail(20), 200_000, 200).event).toEqual({ kind: 'halted', seconds: 60 });
  });

  it('never halts when batcher_max_backoff is 0', () => {
    const r = recordCompletions(initialBackoff(), fail(25), 0, 0);
    expect(isBackingOff(r.state, 0)).toBe(false);
  });
});

describe('completion', () => {
  const ts = (t: string) => ({ clone_url: 'u', playbook: 'p', commit: 'c', status: 'failed', last_updated: t });

  it('marks still-pending layers skipped after success', () => {
    const start = comp('a', { desired_state: [layer(0, 'pending'), layer(1, 'pending')] as never });
    const d = decideCompletion('complete', 'batcher-s', new Map([['a', start]]), [start]);
    expect(d.actions).toHaveLength(1);
    const a = d.actions[0]!;
    expect(a.kind).toBe('skip');
    if (a.kind === 'skip') {
      expect(a.patches).toHaveLength(2);
      expect(a.patches[0]!.state_append).toMatchObject({ status: 'skipped', session_name: 'batcher-s' });
    }
  });

  it('increments error_count on the first pending layer after a failure Ansible did not record', () => {
    const start = comp('a', { error_count: 1, desired_state: [layer(0, 'pending'), layer(1, 'pending')] as never });
    const d = decideCompletion('failed', 'batcher-s', new Map([['a', start]]), [start]);
    expect(d.ansibleFailure).toBe(false);
    expect(d.actions[0]).toMatchObject({
      kind: 'fail',
      patch: { error_count: 2, state_append: { status: 'failed', clone_url: 'https://vcs/l0.git' } },
    });
  });

  it('does nothing when Ansible recorded a failure for a member', () => {
    const start = comp('a', { state: [ts('2024-01-01T00:00:00Z')] });
    const cur = comp('a', { state: [ts('2024-01-01T00:05:00Z')] });
    const d = decideCompletion('failed', 's', new Map([['a', start]]), [cur]);
    expect(d.ansibleFailure).toBe(true);
    expect(d.actions.map((a) => a.kind)).toEqual(['ansible-failure']);
  });

  it('leaves a member whose desired state changed, and ignores members no longer pending', () => {
    const start = comp('a');
    const changed = comp('a', { desired_state: [layer(0, 'pending', { commit: COMMIT_B })] as never });
    const done = toBatchComponent(rawComponent('b', { configuration_status: 'configured' }), false);
    const d = decideCompletion(
      'complete',
      's',
      new Map([
        ['a', start],
        ['b', start],
      ]),
      [changed, (done as { component: BatchComponent }).component],
    );
    expect(d.actions).toEqual([{ id: 'a', kind: 'changed' }]);
  });
});
