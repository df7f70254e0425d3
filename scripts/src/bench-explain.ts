/**
 * Explain latency at N pending components while a cycle runs: the batcher runs as its own process (as the container
 * runs it) against the simulator with a paused operator and no pacing (a paused operator would hold the allowance at
 * its start), so every component ends in a session that never starts (`in_session`) and every cycle pages the whole
 * pending list and follows every session: the heaviest steady state.
 *
 * Then `GET /explain/{id}` is asked open-loop: requests leave at random (Poisson) instants, `rateHz` a second, whether
 * or not the previous ones were answered, as an operator's requests would; each latency runs from the instant the
 * request was due, so an answer held behind a long synchronous stretch of the loop counts its whole wait. (Requests
 * sent one after another would sample a stall once, however long.) The heartbeat file is read every few ms beside
 * them: an answer counts as "during a cycle" when the phase at its due instant was a working one. The measure lasts
 * at least `cycles` complete cycles and `requests` answers during cycles, at most `timeLimitMs`. The batcher's own
 * `/metrics` is read at the start and the end: its event-loop delay (max and p99 over the window, prom-client's
 * `monitorEventLoopDelay`) and its GC pauses.
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readHeartbeat } from '@cfs-batcher/shared';
import { xname } from '@cfs-batcher/cfs-sim';
import { rssMb, startNode, startSim } from './bench-procs';
import { percentile } from './bench-stats';
import { freePort } from './net';
import { waitFor } from './wait';
import { oomNote, PodLimits, type Limits, type Throttling } from './pod-limits';
import { gcDelta, scrape, type GcFigures } from './bench-explain-metrics';

export interface ExplainRun {
  components: number;
  /** Answers due while a cycle was running, and all answers. */
  inCycle: number;
  sent: number;
  cycles: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** Ids CFS does not have (one lookup each), timed the same way. */
  lookupP50Ms: number | null;
  lookupP99Ms: number | null;
  /** The batcher's event-loop delay over the window (null when its /metrics has no such figure). */
  loopDelayMaxMs: number | null;
  loopDelayP99Ms: number | null;
  gc: GcFigures | null;
  states: Record<string, number>;
  loadAverage: number[];
  /** The batcher's CPU limit (CPUs) and, over the window, the periods it ran and those the kernel stopped it in. */
  cpuQuota: number | null;
  throttling: Throttling | null;
  /** Its memory limit (MiB), its peak RSS (MB) and the OOM kills inside the limit; null without a memory limit. */
  memoryLimitMi: number | null;
  peakRssMb: number | null;
  oomKills: number | null;
}

export interface ExplainBenchOptions {
  /** Answers during cycles to collect at least. */
  requests: number;
  /** Complete cycles to measure at least. */
  cycles: number;
  rateHz: number;
  /** Upper bound on the measuring time, whatever the counts. */
  timeLimitMs: number;
  nodeOptions: string;
  runtimeEnv?: Record<string, string>;
  nodeFlags?: string[];
  /** Another build's batcher entry, relative to the repository. */
  batcherScript?: string;
  /** The container's limits (the manifest's `resources.limits`, pod-limits.ts); none when absent. */
  limits?: Limits;
  log: (m: string) => void;
}

const BATCH_SIZE = 25;
const WORKING = new Set(['options', 'check_status', 'collect', 'send']);
const HEARTBEAT_POLL_MS = 5;

function get(agent: http.Agent, url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
        );
      })
      .on('error', reject);
  });
}

/** The heartbeat's phase over time: one entry per change, at the instant the change was read. */
class PhaseTimeline {
  private readonly at: number[] = [];
  private readonly working: boolean[] = [];
  private lastCycle = -1;
  completedCycles = 0;

  note(t: number, phase: string, cycle: number): void {
    const w = WORKING.has(phase);
    if (this.working.at(-1) !== w) {
      this.at.push(t);
      this.working.push(w);
    }
    if (this.lastCycle >= 0 && cycle > this.lastCycle) this.completedCycles += cycle - this.lastCycle;
    this.lastCycle = cycle;
  }

  /** Was a cycle running at `t` (as last read before it)? */
  workingAt(t: number): boolean {
    let lo = 0;
    let hi = this.at.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.at[mid]! <= t) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && this.working[found]!;
  }
}

export async function runExplainBench(n: number, o: ExplainBenchOptions): Promise<ExplainRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-explain-'));
  const scenario = path.join(dir, 'scenario.json');
  const hbFile = path.join(dir, 'heartbeat.json');
  const sessions = Math.ceil(n / BATCH_SIZE);
  writeFileSync(
    scenario,
    JSON.stringify({
      generate: { components: n, configurations: 3 },
      options: { batcher_check_interval: 1, batch_window: 0, batch_size: BATCH_SIZE, batcher_pending_timeout: 86400 },
      operator: { paused: true },
    }),
  );
  const { child: sim, origin } = await startSim(scenario);
  const port = await freePort();
  const env: Record<string, string> = {
    OTEL_SDK_DISABLED: 'true',
    CFS_API_URL: `${origin}/v3`,
    METRICS_PORT: String(port),
    ...o.runtimeEnv,
    NODE_OPTIONS: o.nodeOptions,
    LOG_LEVEL: 'WARNING',
    HEARTBEAT_PATH: hbFile,
    BATCHER_PENDING_SESSIONS_CAP: '0',
  };
  const quota = o.limits ? PodLimits.create(o.limits) : undefined;
  const batcher = startNode(o.batcherScript ?? 'batcher/dist/main.js', [], env, o.nodeFlags ?? [], quota?.prefix());
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let polling = true;
  try {
    const abort = () => (batcher.alive ? null : `batcher exited${oomNote(quota)}: ${batcher.tail(5)}`);
    await waitFor(
      async () => {
        const r = await readHeartbeat(hbFile);
        return r.ok && r.heartbeat.counters.sessions_created_total >= sessions && r.heartbeat.cycle >= 2
          ? true
          : undefined;
      },
      { what: `${sessions} sessions at ${n} pending`, timeoutMs: 900_000, intervalMs: 200, abort },
    );
    const timeline = new PhaseTimeline();
    const poller = (async () => {
      while (polling) {
        const r = await readHeartbeat(hbFile);
        if (r.ok) timeline.note(performance.now(), r.heartbeat.phase, r.heartbeat.cycle);
        await new Promise((res) => setTimeout(res, HEARTBEAT_POLL_MS));
      }
    })();
    const metricsUrl = `http://127.0.0.1:${port}/metrics`;
    const before = await scrape(metricsUrl);
    const throttledBefore = quota?.throttling();
    const base = `http://127.0.0.1:${port}/explain/`;
    const inCycle: number[] = [];
    const lookups: number[] = [];
    const states: Record<string, number> = {};
    const inFlight = new Set<Promise<void>>();
    let sent = 0;
    const start = performance.now();
    let due = start;
    while (
      performance.now() - start < o.timeLimitMs &&
      (timeline.completedCycles < o.cycles || inCycle.length < o.requests)
    ) {
      const gone = abort();
      if (gone) throw new Error(gone);
      due += -Math.log(1 - Math.random()) * (1000 / o.rateHz);
      const wait = due - performance.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
      // Spread over the inventory: low indices are in sessions, high ones in held batches; every 10th is unknown.
      const i = sent++;
      const unknown = i % 10 === 9;
      const id = unknown ? `x9${String(i % 10_000).padStart(4, '0')}c0s0b0n0` : xname((i * 7919) % n);
      const dueAt = due;
      const p = get(agent, base + id).then((r) => {
        const ms = performance.now() - dueAt;
        const state = String(r.body.state ?? r.body.error);
        states[state] = (states[state] ?? 0) + 1;
        if (timeline.workingAt(dueAt)) (unknown ? lookups : inCycle).push(ms);
      });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await Promise.all(inFlight);
    const after = await scrape(metricsUrl);
    const throttledAfter = quota?.throttling();
    polling = false;
    await poller;
    return {
      components: n,
      inCycle: inCycle.length,
      sent,
      cycles: timeline.completedCycles,
      p50Ms: percentile(inCycle, 50),
      p95Ms: percentile(inCycle, 95),
      p99Ms: percentile(inCycle, 99),
      maxMs: inCycle.length > 0 ? Math.max(...inCycle) : null,
      lookupP50Ms: percentile(lookups, 50),
      lookupP99Ms: percentile(lookups, 99),
      loopDelayMaxMs: after.loopMaxMs,
      loopDelayP99Ms: after.loopP99Ms,
      gc: gcDelta(before, after),
      states,
      loadAverage: os.loadavg(),
      cpuQuota: o.limits?.cpus ?? null,
      memoryLimitMi: o.limits?.memoryBytes !== undefined ? o.limits.memoryBytes / 2 ** 20 : null,
      peakRssMb: rssMb(batcher.pid, 'VmHWM'),
      oomKills: quota?.memory()?.oomKills ?? null,
      throttling:
        throttledBefore && throttledAfter
          ? {
              periods: throttledAfter.periods - throttledBefore.periods,
              throttledPeriods: throttledAfter.throttledPeriods - throttledBefore.throttledPeriods,
              throttledMs: throttledAfter.throttledMs - throttledBefore.throttledMs,
            }
          : null,
    };
  } finally {
    polling = false;
    agent.destroy();
    await batcher.stop();
    quota?.remove();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
