/**
 * Start-up rebuild (pure part): which CFS sessions are the batcher's in-flight work, and who their members are.
 * Only names starting `batcher-` count (the original's substring test adopted foreign sessions), and a session
 * with an empty or missing ansible limit is reported, not crashed on.
 */
import type { CfsSession } from '@cfs-batcher/shared';
import { isBatcherSession } from './session-status';

export interface RebuildTarget {
  sessionName: string;
  configName: string;
  configLimit: string;
  memberIds: string[];
}

export interface RebuildPlan {
  targets: RebuildTarget[];
  skipped: { name: string; reason: string }[];
}

export function planRebuild(sessions: readonly CfsSession[]): RebuildPlan {
  const targets: RebuildTarget[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const s of sessions) {
    if (!isBatcherSession(s.name)) continue;
    const status = (s.status?.session?.status ?? '').toLowerCase();
    if (status === 'complete') continue;
    const configName = s.configuration?.name;
    if (typeof configName !== 'string' || configName === '') {
      skipped.push({ name: s.name, reason: 'no configuration name' });
      continue;
    }
    const memberIds = [
      ...new Set(
        (s.ansible?.limit ?? '')
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== ''),
      ),
    ];
    if (memberIds.length === 0) {
      skipped.push({ name: s.name, reason: 'empty ansible limit' });
      continue;
    }
    targets.push({ sessionName: s.name, configName, configLimit: s.configuration?.limit ?? '', memberIds });
  }
  return { targets, skipped };
}
