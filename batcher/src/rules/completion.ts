/**
 * What to write back when a batch's session has finished (pure), after the original's _handle_incomplete_components.
 *
 * Ansible records state for the hosts it processed. For members it did not record:
 * - session succeeded: their still-pending layers are marked `skipped` (nothing applied to them);
 * - session failed with no Ansible-recorded failure among the members (clone/inventory/config failure): error_count+1
 *   and `failed` on the first pending layer, so the retry policy eventually stops the loop;
 * - a member whose desired state changed since it was batched is left alone (it will be batched again).
 */
import type { ComponentPatch } from '@cfs-batcher/shared';
import { isStillPending, type BatchComponent } from './component';

export type CompletionAction =
  | { id: string; kind: 'skip'; patches: ComponentPatch[] }
  | { id: string; kind: 'fail'; patch: ComponentPatch }
  | { id: string; kind: 'changed' }
  | { id: string; kind: 'ansible-failure' }
  | { id: string; kind: 'no-snapshot' };

export interface CompletionDecision {
  ansibleFailure: boolean;
  /** Only for members still pending now; the others are done and need nothing. */
  actions: CompletionAction[];
}

export function decideCompletion(
  result: 'complete' | 'failed',
  sessionName: string,
  snapshots: ReadonlyMap<string, BatchComponent | null>,
  current: readonly BatchComponent[],
): CompletionDecision {
  const members = current.filter((c) => snapshots.has(c.id));
  const ansibleFailure =
    result === 'failed' &&
    members.some((cur) => {
      const startTs = snapshots.get(cur.id)?.latestTimestamp ?? '';
      return cur.latestStatus === 'failed' && (startTs === '' || cur.latestTimestamp !== startTs);
    });
  const actions: CompletionAction[] = [];
  for (const cur of members) {
    if (!isStillPending(cur)) continue;
    const start = snapshots.get(cur.id);
    if (!start) {
      actions.push({ id: cur.id, kind: 'no-snapshot' });
    } else if (start.desiredStateHash !== cur.desiredStateHash) {
      actions.push({ id: cur.id, kind: 'changed' });
    } else if (result === 'complete') {
      actions.push({
        id: cur.id,
        kind: 'skip',
        patches: cur.pendingLayers.map((l) => ({
          state_append: {
            clone_url: l.clone_url,
            playbook: l.playbook,
            commit: l.commit,
            status: 'skipped',
            session_name: sessionName,
          },
        })),
      });
    } else if (!ansibleFailure && cur.pendingLayers.length > 0) {
      const l = cur.pendingLayers[0]!;
      actions.push({
        id: cur.id,
        kind: 'fail',
        patch: {
          state_append: {
            clone_url: l.clone_url,
            playbook: l.playbook,
            commit: l.commit,
            status: 'failed',
            session_name: sessionName,
          },
          error_count: cur.errorCount + 1,
        },
      });
    } else {
      actions.push({ id: cur.id, kind: 'ansible-failure' });
    }
  }
  return { ansibleFailure, actions };
}
