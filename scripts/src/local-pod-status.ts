/** The local pod's status line: the batcher's heartbeat, the sidecar's verdict, and CFS's own view of the work. */
import { readHeartbeat } from '@cfs-batcher/shared';
import { httpProbe } from './container';
import { countBatcherSessions, countComponentStatuses } from './sim-client';

export interface Summary {
  components: Record<string, number>;
  batcherRestarts: number;
  sidecarRestarts: number;
  cycle: number | null;
  sessionsCreated: number | null;
}

export async function statusLine(
  cfsUrl: string,
  simOrigin: string,
  heartbeatPath: string,
  healthPort: number,
  pid: number | null,
  summary: Summary,
): Promise<string> {
  const [hb, verdict, counts, sessions] = await Promise.all([
    readHeartbeat(heartbeatPath),
    httpProbe('127.0.0.1', healthPort, '/livez', 1000),
    countComponentStatuses(cfsUrl).catch((err: Error) => err),
    countBatcherSessions(simOrigin).catch(() => null),
  ]);
  const parts: string[] = [`pid ${pid ?? '-'}`];
  if (hb.ok) {
    const h = hb.heartbeat;
    summary.cycle = h.cycle;
    parts.push(
      `cycle ${h.cycle}`,
      `phase ${h.phase}`,
      // The batcher's own count: schedulable pending components its last collect saw.
      `batcher schedulable ${h.counters.pending_seen}`,
      `heartbeat ${((Date.now() - h.written_at_ms) / 1000).toFixed(1)}s ago`,
    );
  } else {
    parts.push(`heartbeat ${hb.reason}`);
  }
  const reason = /"reason":"([^"]+)"/.exec(verdict.detail)?.[1];
  parts.push(`verdict ${verdict.ok ? 'live' : 'NOT LIVE'}${reason ? ` (${reason})` : ''}`);
  // Sessions from CFS's own history, so the count survives batcher restarts (the batcher's counter does not).
  if (sessions !== null) {
    summary.sessionsCreated = sessions;
    parts.push(`batcher sessions in CFS ${sessions}`);
  }
  if (counts instanceof Error) parts.push(`cfs ${counts.message}`);
  else {
    summary.components = counts;
    parts.push(
      `CFS components ${Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  }
  return parts.join(' | ');
}
