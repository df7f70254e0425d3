/** Turning a CFS component record into a batch member: limit, status, key, pending layers, or why it is rejected. */
import { batchKeyOf, toBatchComponent } from '@cfs-batcher/batcher';
import { COMMIT_B, comp, layer, rawComponent } from './fixtures';

describe('component', () => {
  it('computes limit, latest status, key and pending layers', () => {
    const c = comp('x1', {
      desired_state: [layer(0, 'configured'), layer(1, 'pending'), layer(2, 'pending')] as never,
      state: [
        { clone_url: 'u', playbook: 'p', commit: 'c', status: 'applied', last_updated: '2024-01-01T00:00:00Z' },
        { clone_url: 'u2', playbook: 'p', commit: 'c', status: 'failed', last_updated: '2024-01-02T00:00:00Z' },
      ],
    });
    expect(c.configLimit).toBe('1,2');
    expect(c.latestStatus).toBe('failed');
    expect(c.latestTimestamp).toBe('2024-01-02T00:00:00Z');
    expect(c.batchKey).toBe(batchKeyOf('cfg', '1,2', 'failed'));
    expect(c.pendingLayers.map((l) => l.index)).toEqual([1, 2]);
  });

  it('changes its desired-state hash when a commit changes', () => {
    const a = comp('x1');
    const b = comp('x1', { desired_state: [layer(0, 'pending', { commit: COMMIT_B })] as never });
    expect(a.desiredStateHash).not.toBe(b.desiredStateHash);
  });

  it.each([
    ['missing desired_config', { desired_config: undefined }],
    ['missing or invalid error_count', { error_count: undefined }],
    ['desired_state[0] has no playbook', { desired_state: [layer(0, 'pending', { playbook: undefined })] }],
    ['desired_state[0] has no commit', { desired_state: [layer(0, 'pending', { commit: undefined })] }],
    ['missing desired_state (config_details)', { desired_state: undefined }],
    ['no pending layer', { desired_state: [layer(0, 'configured')] }],
  ])('rejects a record with %s', (reason, over) => {
    const r = toBatchComponent(rawComponent('bad', over));
    expect(r).toEqual({ ok: false, id: 'bad', reason });
  });
});
