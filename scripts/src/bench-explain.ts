/**
 * Explain latency at N pending components while a cycle runs: the batcher runs as its own process (as the container
 * runs it) against the simulator with a paused operator; the pending-sessions cap holds half the components in
 * sessions (`in_session`) and the rest in ready batches (`held`, pacing), so every cycle pages the whole pending list,
 * the heaviest steady state. Then `GET /explain/{id}` is asked one request at a time for ids of both states (and,
 * apart, for ids CFS does not have, which cost one CFS lookup each) and the latency of the answers given while the
 * heartbeat says a cycle is running (not the sleep between cycles) is reported. Bounded in requests and time.
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readHeartbeat } from '@cfs-batcher/shared';
import { xname } from '@cfs-batcher/cfs-sim';
import { startNode, startSim } from './bench-procs';
import { percentile } from './bench-stats';
import { freePort } from './net';
import { waitFor } from './wait';

export interface ExplainRun {
  components: number;
  /** Answers timed while a cycle was running, and all answers. */
  inCycle: number;
  sent: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** Ids CFS does not have (one lookup each), timed the same way. */
  lookupP50Ms: number | null;
  lookupP99Ms: number | null;
  states: Record<string, number>;
  loadAverage: number[];
}

export interface ExplainBenchOptions {
  requests: number;
  /** Upper bound on the measuring time, whatever the count. */
  timeLimitMs: number;
  nodeOptions: string;
  runtimeEnv?: Record<string, string>;
  nodeFlags?: string[];
  log: (m: string) => void;
}

const BATCH_SIZE = 25;
const WORKING = new Set(['options', 'check_status', 'collect', 'send']);

function get(agent: http.Agent, url: string): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(text) as Record<string, unknown>,
            ms: performance.now() - t0,
          }),
        );
      })
      .on('error', reject);
  });
}

export async function runExplainBench(n: number, o: ExplainBenchOptions): Promise<ExplainRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-explain-'));
  const scenario = path.join(dir, 'scenario.json');
  const hbFile = path.join(dir, 'heartbeat.json');
  const sessionsCap = Math.ceil(n / 2 / BATCH_SIZE);
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
    STARTING_CFS_LOG_LEVEL: 'WARNING',
    HEARTBEAT_PATH: hbFile,
    BATCHER_PENDING_SESSIONS_CAP: String(sessionsCap),
    BATCHER_CREATES_PER_MINUTE: '0',
    BATCHER_SEND_MAX_PER_PHASE: String(sessionsCap),
  };
  const batcher = startNode('batcher/dist/main.js', [], env, o.nodeFlags ?? []);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const abort = () => (batcher.alive ? null : `batcher exited: ${batcher.tail(5)}`);
    const phase = async (): Promise<string | undefined> => {
      const r = await readHeartbeat(hbFile);
      return r.ok ? r.heartbeat.phase : undefined;
    };
    await waitFor(
      async () => {
        const r = await readHeartbeat(hbFile);
        return r.ok && r.heartbeat.counters.sessions_created_total >= sessionsCap && r.heartbeat.cycle >= 2
          ? true
          : undefined;
      },
      { what: `${sessionsCap} sessions at ${n} pending`, timeoutMs: 900_000, intervalMs: 200, abort },
    );
    await waitFor(async () => (WORKING.has((await phase()) ?? '') ? true : undefined), {
      what: 'a running cycle',
      timeoutMs: 120_000,
      intervalMs: 5,
      abort,
    });
    const base = `http://127.0.0.1:${port}/explain/`;
    const inCycle: number[] = [];
    const lookups: number[] = [];
    const states: Record<string, number> = {};
    let sent = 0;
    let working = true;
    const end = Date.now() + o.timeLimitMs;
    for (let i = 0; i < o.requests && Date.now() < end; i++) {
      if (i % 20 === 0) working = WORKING.has((await phase()) ?? '');
      // Spread over the inventory: low indices are in sessions, high ones in held batches; every 10th is unknown.
      const unknown = i % 10 === 9;
      const id = unknown ? `x9${String(i).padStart(4, '0')}c0s0b0n0` : xname((i * 7919) % n);
      const r = await get(agent, base + id);
      sent += 1;
      const state = String(r.body.state ?? r.body.error);
      states[state] = (states[state] ?? 0) + 1;
      if (!working) continue;
      (unknown ? lookups : inCycle).push(r.ms);
    }
    return {
      components: n,
      inCycle: inCycle.length,
      sent,
      p50Ms: percentile(inCycle, 50),
      p99Ms: percentile(inCycle, 99),
      maxMs: inCycle.length > 0 ? Math.max(...inCycle) : null,
      lookupP50Ms: percentile(lookups, 50),
      lookupP99Ms: percentile(lookups, 99),
      states,
      loadAverage: os.loadavg(),
    };
  } finally {
    agent.destroy();
    await batcher.stop();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
