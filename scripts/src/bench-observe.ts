/**
 * What the benches read from a running batcher and the simulator: the batcher's CPU seconds (/proc/<pid>/stat), its
 * heartbeat and the next sleep it announces, and the simulator's request and byte counters per route.
 */
import { readFileSync } from 'node:fs';
import { readHeartbeat, type Heartbeat } from '@cfs-batcher/shared';
import { httpJson } from './bench-procs';
import type { Proc } from './proc';
import { procStatCpuTicks } from './bench-stats';
import { waitFor } from './wait';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

export function cpuSeconds(pid: number): number | null {
  try {
    const ticks = procStatCpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return ticks === null ? null : ticks / CLK_TCK;
  } catch {
    return null;
  }
}

export async function hb(file: string): Promise<Heartbeat | undefined> {
  const r = await readHeartbeat(file);
  return r.ok ? r.heartbeat : undefined;
}

export interface SimStats {
  total: number;
  byRoute: Record<string, number>;
  bytes: number;
  bytesByRoute: Record<string, number>;
}

export async function simTotal(origin: string): Promise<SimStats> {
  const r = await httpJson('GET', `${origin}/__sim/stats`);
  return r.json as SimStats;
}

/** Per-cycle deltas of a route -> count map. */
export function perCycle(a: Record<string, number>, b: Record<string, number>, cycles: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) {
    const d = v - (a[k] ?? 0);
    if (d > 0) out[k] = Math.round((d / cycles) * 10) / 10;
  }
  return out;
}

/** The next sleep after cycle `after`; fails at once when the batcher exits (for example on a refused node flag). */
export async function nextSleep(file: string, after: number, timeoutMs: number, batcher: Proc): Promise<Heartbeat> {
  return waitFor(
    async () => {
      const h = await hb(file);
      return h && h.phase === 'sleep' && h.cycle > after ? h : undefined;
    },
    {
      what: `a cycle after #${after}`,
      timeoutMs,
      intervalMs: 20,
      abort: () => (batcher.alive ? null : `batcher exited: ${batcher.tail(5)}`),
    },
  );
}
