/**
 * Batcher cost at N pending components, steady state: the simulator's operator is paused, so once every component
 * is in a session each cycle pages the pending list and follows the in-flight sessions (the state the original's
 * "390 requests/cycle at 10k" was measured in). Per steady cycle: requests and response bytes (the simulator's
 * counters), busy time (the heartbeat's cycle duration: options to send, no sleep), CPU seconds (utime+stime of
 * /proc/<pid>/stat); bytes per minute over the measured wall time; peak RSS (VmHWM). Then the batcher is restarted
 * with every session still in flight and the time to a rebuilt state is measured.
 * The batcher runs as its own process as the container runs it: plain node, the manifest's NODE_OPTIONS and runtime
 * env (or the bench's --node-flags / --node-options for a comparison), inside the container's CPU and memory limits
 * (pod-limits.ts) when given; an OOM kill there ends the run with an error saying so.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds, hb, nextSleep, perCycle, simTotal } from './bench-observe';
import { rssMb, sleep, startNode, startSim } from './bench-procs';
import { waitFor } from './wait';
import { median } from './bench-stats';
import { oomNote, PodLimits, type Limits } from './pod-limits';

export interface CycleRun {
  components: number;
  fillSeconds: number;
  /** Spawn -> the first heartbeat on disk (start-up: node, the modules, configuration, the first CFS answer). */
  firstBeatMs: number | null;
  /** Duration of the first cycle (the one that creates most sessions). */
  firstCycleMs: number | null;
  /** Batcher CPU seconds from spawn until every component is in a session (start-up included): robust to load. */
  fillCpuS: number | null;
  cycleMs: number | null;
  requestsPerCycle: number;
  peakRssMb: number | null;
  steadyRssMb: number | null;
  sessions: number;
  cyclesMeasured: number;
  byRoute: Record<string, number>;
  /** CPU seconds (user+system) of the batcher per steady cycle. */
  cpuPerCycleS: number | null;
  /** Response body bytes pulled from CFS per steady cycle, and per minute of wall time. */
  bytesPerCycle: number;
  bytesPerMinute: number;
  bytesByRoute: Record<string, number>;
  /** Restart with every session in flight: spawn -> first phase after rebuild (wall), and the process's own view. */
  rebuildWallS: number | null;
  rebuildFromStartS: number | null;
  transport: string;
  /** The container limits it ran under, the cgroup's peak charge (MB) and the OOM kills inside; null without limits. */
  limits: Limits | null;
  cgroupPeakMb: number | null;
  oomKills: number | null;
}

const BATCH_SIZE = 25;
/** A new instance against the same CFS: seconds from spawn to the first phase after `rebuild`. */
async function measureRebuild(
  script: string,
  env: Record<string, string>,
  hbFile: string,
  timeoutMs: number,
  nodeFlags: string[],
  prefix: string[],
): Promise<{ wallS: number; fromStartS: number }> {
  const t0 = Date.now();
  const b = startNode(script, [], { ...env, HEARTBEAT_PATH: hbFile }, nodeFlags, prefix);
  try {
    const h = await waitFor(
      async () => {
        if (!b.alive) throw new Error(`restarted batcher exited: ${b.tail(5)}`);
        const x = await hb(hbFile);
        return x && x.phase !== 'starting' && x.phase !== 'rebuild' ? x : undefined;
      },
      { what: 'the restarted batcher to rebuild', timeoutMs, intervalMs: 10 },
    );
    return { wallS: (Date.now() - t0) / 1000, fromStartS: (h.phase_started_at_ms - h.started_at_ms) / 1000 };
  } finally {
    await b.stop();
  }
}

export interface CycleBenchOptions {
  nodeOptions: string;
  /** Other runtime settings from the manifest's env (MALLOC_ARENA_MAX), as the container gets them. */
  runtimeEnv?: Record<string, string>;
  /** Node and V8 flags on the batcher's command line, for a comparison run (the image gives none). */
  nodeFlags?: string[];
  measureCycles: number;
  log: (m: string) => void;
  /** Simulator transport (cfs-sim/README.md): nodelay (default) or python. */
  transport?: 'nodelay' | 'python';
  rebuild?: boolean;
  /** The batcher's entry script, relative to the repository (another build, for before/after runs). */
  batcherScript?: string;
  /** Tracing on: every span exported over OTLP/HTTP to a sink on 127.0.0.1 that accepts and drops it. */
  tracing?: boolean;
  /** The container's limits (the manifest's `resources.limits`); none when absent. */
  limits?: Limits;
}

/** An OTLP/HTTP endpoint that answers every export with 200 (what the batcher pays to trace, not the collector). */
async function startTraceSink(): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => void server.close() };
}

export async function runCycleBench(n: number, o: CycleBenchOptions): Promise<CycleRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-bench-'));
  const scenario = path.join(dir, 'scenario.json');
  const hbFile = path.join(dir, 'heartbeat.json');
  writeFileSync(
    scenario,
    JSON.stringify({
      generate: { components: n, configurations: 3 },
      options: { batcher_check_interval: 1, batch_window: 0, batch_size: BATCH_SIZE, batcher_pending_timeout: 86400 },
      operator: { paused: true },
      server: { transport: o.transport ?? 'nodelay' },
    }),
  );
  const { child: sim, origin } = await startSim(scenario);
  const sink = o.tracing ? await startTraceSink() : null;
  const env: Record<string, string> = {
    ...(sink
      ? { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_EXPORTER: 'otlp' }
      : { OTEL_SDK_DISABLED: 'true' }),
    CFS_API_URL: `${origin}/v3`,
    METRICS_PORT: '0',
    ...o.runtimeEnv,
    NODE_OPTIONS: o.nodeOptions,
    LOG_LEVEL: 'WARNING',
    // The operator is paused (sessions stay pending to hold a steady state), so the pending-sessions allowance would
    // hold creation at its start of 40 sessions: this bench measures the batcher's own cost, pacing is measured apart
    // (the convergence bench's operator shapes, scripts/src/bench-converge-shapes.ts).
    BATCHER_PENDING_SESSIONS_CAP: '0',
  };
  const script = o.batcherScript ?? 'batcher/dist/main.js';
  const cgroup = o.limits ? PodLimits.create(o.limits) : null;
  const prefix = cgroup?.prefix() ?? [];
  const batcher = startNode(script, [], { ...env, HEARTBEAT_PATH: hbFile }, o.nodeFlags ?? [], prefix);
  const exited = (): string | null => (batcher.alive ? null : `batcher exited${oomNote(cgroup)}: ${batcher.tail(5)}`);
  try {
    const pid = batcher.pid;
    const t0 = Date.now();
    const firstBeat = await waitFor(async () => ((await hb(hbFile)) ? Date.now() : undefined), {
      what: 'the first heartbeat',
      timeoutMs: 120_000,
      intervalMs: 5,
      abort: exited,
    });
    // Filled: nothing queued, sessions exist, and two cycles in a row created nothing.
    let lastCreated = -1;
    let quiet = 0;
    let cycle = 0;
    let firstCycleMs: number | null = null;
    const expectMin = Math.ceil(n / BATCH_SIZE);
    const filled = await waitFor(
      async () => {
        const h = await nextSleep(hbFile, cycle, 600_000, batcher);
        cycle = h.cycle;
        if (h.cycle === 1 && h.last_cycle) firstCycleMs = h.last_cycle.duration_ms;
        const created = h.counters.sessions_created_total;
        quiet = created === lastCreated && h.counters.batches_queued === 0 && created >= expectMin ? quiet + 1 : 0;
        lastCreated = created;
        return quiet >= 2 ? h : undefined;
      },
      {
        what: `all ${n} components in sessions`,
        timeoutMs: 600_000,
        intervalMs: 0,
        abort: exited,
      },
    );
    const fillSeconds = (Date.now() - t0) / 1000;
    const fillCpuS = cpuSeconds(pid);
    o.log(
      `  ${n}: ${filled.counters.sessions_created_total} sessions after ${fillSeconds.toFixed(1)} s; measuring ${o.measureCycles} cycles`,
    );
    const start = await nextSleep(hbFile, filled.cycle, 120_000, batcher);
    const s0 = await simTotal(origin);
    const cpu0 = cpuSeconds(pid);
    const w0 = Date.now();
    const durations: number[] = [];
    let h = start;
    for (let i = 0; i < o.measureCycles; i++) {
      h = await nextSleep(hbFile, h.cycle, 120_000, batcher);
      if (h.last_cycle) durations.push(h.last_cycle.duration_ms);
    }
    const s1 = await simTotal(origin);
    const cpu1 = cpuSeconds(pid);
    const wallMs = Date.now() - w0;
    const cycles = h.cycle - start.cycle;
    const peakRssMb = rssMb(pid, 'VmHWM');
    const steadyRssMb = rssMb(pid, 'VmRSS');
    const mem = cgroup?.memory() ?? null;
    await batcher.stop(); // SIGTERM: sessions stay in flight for the restarted instance
    let rebuilt: { wallS: number; fromStartS: number } | undefined;
    if (o.rebuild !== false)
      rebuilt = await measureRebuild(
        script,
        env,
        path.join(dir, 'heartbeat-2.json'),
        600_000,
        o.nodeFlags ?? [],
        prefix,
      );
    const bytes = s1.bytes - s0.bytes;
    return {
      components: n,
      fillSeconds,
      firstBeatMs: firstBeat - t0,
      firstCycleMs,
      fillCpuS,
      cycleMs: median(durations),
      requestsPerCycle: (s1.total - s0.total) / cycles, // /__sim calls are not counted by the simulator
      peakRssMb,
      steadyRssMb,
      sessions: h.counters.sessions_created_total,
      cyclesMeasured: cycles,
      byRoute: perCycle(s0.byRoute, s1.byRoute, cycles),
      cpuPerCycleS: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / cycles,
      bytesPerCycle: bytes / cycles,
      bytesPerMinute: (bytes / wallMs) * 60_000,
      bytesByRoute: perCycle(s0.bytesByRoute, s1.bytesByRoute, cycles),
      rebuildWallS: rebuilt?.wallS ?? null,
      rebuildFromStartS: rebuilt?.fromStartS ?? null,
      transport: o.transport ?? 'nodelay',
      limits: o.limits ?? null,
      cgroupPeakMb: mem?.peakBytes != null ? mem.peakBytes / 2 ** 20 : null,
      oomKills: cgroup?.memory()?.oomKills ?? null,
    };
  } catch (err) {
    const oom = oomNote(cgroup);
    throw oom ? new Error(`${(err as Error).message} (${oom.slice(2)})`, { cause: err }) : err;
  } finally {
    await batcher.stop();
    cgroup?.remove();
    await sim.stop();
    sink?.close();
    rmSync(dir, { recursive: true, force: true });
    await sleep(200);
  }
}
