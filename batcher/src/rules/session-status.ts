/**
 * What a CFS session means to the batcher (pure), after the original's Batch.get_status.
 * succeeded=false or unknown is a failure even before status says complete (the Job vanished or failed).
 */
import { BATCHER_SESSION_PREFIX, type CfsSession } from '@cfs-batcher/shared';

export type SessionOutcome = 'pending' | 'running' | 'complete' | 'failed' | 'unknown';

export function sessionOutcome(s: CfsSession): SessionOutcome {
  const st = s.status?.session;
  const succeeded = (st?.succeeded ?? '').toLowerCase();
  if (succeeded === 'false' || succeeded === 'unknown') return 'failed';
  const status = (st?.status ?? '').toLowerCase();
  // As the original: complete without a failure verdict counts as success.
  if (status === 'complete' || status === 'pending' || status === 'running') return status;
  return 'unknown';
}

/** Session names the batcher owns: `batcher-` prefix (the original's substring test also caught foreign names). */
export const SESSION_PREFIX = BATCHER_SESSION_PREFIX;

export function isBatcherSession(name: string): boolean {
  return name.startsWith(SESSION_PREFIX);
}
