/** Record builders shared by the batcher tests. */
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
