/**
 * Batcher cycle time, CFS requests per cycle and peak RSS at N pending components, steady state: the simulator's
 * operator is paused, so once every component is in a session each cycle pages the pending list and follows the
 * in-flight sessions (the state the original's "390 requests/cycle at 10k" was measured in).
 * The batcher runs as its own process with the manifest's NODE_OPTIONS; RSS is read from /proc/<pid>/status.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat, type Heartbeat } from '@cfs-batcher/shared';
import { httpJson, rssMb, sleep, startNode, startSim } from './bench-procs';
import { waitFor } from './wait';
import { median } from './bench-stats';

export interface CycleRun {
  components: number;
  fillSeconds: number;
  cycleMs: number | null;
  requestsPerCycle: number;
  peakRssMb: number | null;
  steadyRssMb: number | null;
  sessions: number;
  cyclesMeasured: number;
  byRoute: Record<string, number>;
}

const BATCH_SIZE = 25;

async function hb(file: string): Promise<Heartbeat | undefined> {
  const r = await readHeartbeat(file);
  return r.ok ? r.heartbeat : undefined;
}

async function simTotal(origin: string): Promise<{ total: number; byRoute: Record<string, number> }> {
  const r = await httpJson('GET', `${origin}/__sim/stats`);
  return r.json as { total: number; byRoute: Record<string, number> };
}

/** Waits for the first heartbeat in `sleep` of a cycle after `after`; returns it. */
async function nextSleep(file: string, after: number, timeoutMs: number): Promise<Heartbeat> {
  return waitFor(
    async () => {
      const h = await hb(file);
      return h && h.phase === 'sleep' && h.cycle > after ? h : undefined;
    },
    { what: `a cycle after #${after}`, timeoutMs, intervalMs: 20 },
  );
}

export async function runCycleBench(n: number, o: { nodeOptions: string; measureCycles: number; log: (m: string) => void }): Promise<CycleRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-bench-'));
  const scenario = path.join(dir, 'scenario.json');
  const hbFile = path.join(dir, 'heartbeat.json');
  writeFileSync(
    scenario,
    JSON.stringify({
      generate: { components: n, configurations: 3 },
      options: { batcher_check_interval: 1, batch_window: 0, batch_size: BATCH_SIZE, batcher_pending_timeout: 86400 },
      operator: { paused: true },
    }),
  );
  const { child: sim, origin } = await startSim(scenario);
  const batcher = startNode('batcher/dist/main.js', [], {
    CFS_API_URL: `${origin}/v3`,
    HEARTBEAT_PATH: hbFile,
    METRICS_PORT: '0',
    NODE_OPTIONS: o.nodeOptions,
    STARTING_CFS_LOG_LEVEL: 'WARNING',
  });
  try {
    const pid = batcher.pid;
    const t0 = Date.now();
    // Filled: nothing queued, sessions exist, and two cycles in a row created nothing.
    let lastCreated = -1;
    let quiet = 0;
    let cycle = 0;
    const expectMin = Math.ceil(n / BATCH_SIZE);
    const filled = await waitFor(async () => {
      const h = await nextSleep(hbFile, cycle, 600_000);
      cycle = h.cycle;
      const created = h.counters.sessions_created_total;
      quiet = created === lastCreated && h.counters.batches_queued === 0 && created >= expectMin ? quiet + 1 : 0;
      lastCreated = created;
      return quiet >= 2 ? h : undefined;
    }, { what: `all ${n} components in sessions`, timeoutMs: 600_000, intervalMs: 0, abort: () => (batcher.alive ? null : `batcher exited: ${batcher.tail(5)}`) });
    const fillSeconds = (Date.now() - t0) / 1000;
    o.log(`  ${n}: ${filled.counters.sessions_created_total} sessions after ${fillSeconds.toFixed(1)} s; measuring ${o.measureCycles} cycles`);
    const start = await nextSleep(hbFile, filled.cycle, 120_000);
    const s0 = await simTotal(origin);
    const durations: number[] = [];
    let h = start;
    for (let i = 0; i < o.measureCycles; i++) {
      h = await nextSleep(hbFile, h.cycle, 120_000);
      if (h.last_cycle) durations.push(h.last_cycle.duration_ms);
    }
    const s1 = await simTotal(origin);
    const cycles = h.cycle - start.cycle;
    const byRoute: Record<string, number> = {};
    for (const [k, v] of Object.entries(s1.byRoute)) {
      const d = v - (s0.byRoute[k] ?? 0);
      if (d > 0) byRoute[k] = Math.round((d / cycles) * 10) / 10;
    }
    return {
      components: n,
      fillSeconds,
      cycleMs: median(durations),
      requestsPerCycle: (s1.total - s0.total) / cycles, // /__sim calls are not counted by the simulator
      peakRssMb: rssMb(pid, 'VmHWM'),
      steadyRssMb: rssMb(pid, 'VmRSS'),
      sessions: h.counters.sessions_created_total,
      cyclesMeasured: cycles,
      byRoute,
    };
  } finally {
    await batcher.stop();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
    await sleep(200);
  }
}
