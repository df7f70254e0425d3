/** Rebuilding after a restart: which CFS sessions are adopted, and what each session status means. */
import { planRebuild, sessionOutcome } from '@cfs-batcher/batcher';
import type { CfsSession } from '@cfs-batcher/shared';

describe('rebuild plan and session status', () => {
  const session = (name: string, status: string, limit: string | null, succeeded = 'none'): CfsSession => ({
    name,
    configuration: { name: 'cfg', limit: '0' },
    ansible: { limit },
    status: { session: { status, succeeded } },
  });

  it('adopts incomplete batcher- sessions only and reports empty limits', () => {
    const plan = planRebuild([
      session('batcher-1', 'running', 'a,b'),
      session('batcher-2', 'complete', 'c', 'true'),
      session('my-batcher-x', 'running', 'd'),
      session('batcher-3', 'pending', ''),
      session('batcher-4', 'pending', null),
    ]);
    expect(plan.targets).toEqual([
      { sessionName: 'batcher-1', configName: 'cfg', configLimit: '0', memberIds: ['a', 'b'] },
    ]);
    expect(plan.skipped.map((s) => s.name)).toEqual(['batcher-3', 'batcher-4']);
  });

  it.each([
    ['pending', 'none', 'pending'],
    ['running', 'none', 'running'],
    ['complete', 'true', 'complete'],
    ['complete', 'false', 'failed'],
    ['complete', 'unknown', 'failed'],
    ['running', 'false', 'failed'],
    ['weird', 'none', 'unknown'],
  ])('status %s succeeded %s -> %s', (status, succeeded, outcome) => {
    expect(sessionOutcome(session('batcher-1', status, 'a', succeeded))).toBe(outcome);
  });
});
