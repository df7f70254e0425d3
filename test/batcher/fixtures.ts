/** Record builders shared by the batcher tests. */
import { toBatchComponent, type BatchComponent } from '@cfs-batcher/batcher';
import type { CfsComponent } from '@cfs-batcher/shared';

export const COMMIT_A = 'a'.repeat(40);
export const COMMIT_B = 'b'.repeat(40);

export function layer(i: number, status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `l${i}`,
    clone_url: `https://vcs/l${i}.git`,
    commit: COMMIT_A,
    playbook: 'site.yml',
    status,
    ...extra,
  };
}

export function rawComponent(id: string, over: Partial<CfsComponent> & Record<string, unknown> = {}): CfsComponent {
  return {
    id,
    desired_config: 'cfg',
    enabled: true,
    error_count: 0,
    tags: {},
    state: [],
    desired_state: [layer(0, 'pending')],
    configuration_status: 'pending',
    ...over,
  };
}

/** A raw component turned into the batcher's view of it; a record the batcher would reject throws. */
export function comp(id: string, over: Parameters<typeof rawComponent>[1] = {}): BatchComponent {
  const r = toBatchComponent(rawComponent(id, over));
  if (!r.ok) throw new Error(r.reason);
  return r.component;
}
