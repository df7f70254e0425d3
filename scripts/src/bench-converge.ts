/**
 * Convergence after a whole-system change: N components turn pending at once and the batcher starts from nothing.
 * Measured from spawn until every component is in a session the simulator holds active (its sessions summary:
 * hosts of pending and running sessions), against an operator that starts sessions promptly or a slow one, with
 * the shipped pacing or none: wall seconds, batcher CPU seconds (/proc/<pid>/stat, robust to a loaded machine),
 * CFS requests; then until every session has started: the peak of sessions pending in CFS and the sessions deleted
 * while still pending (a slow operator's backlog runs into the pending timeout after the creates). Then a few steady
 * cycles (sessions held running): requests and CPU per cycle, peak RSS. The batcher runs as its own process with the
 * manifest's NODE_OPTIONS, inside the container's limits when given, as in the cycle bench.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds, hb, nextSleep, simTotal } from './bench-observe';
import { httpJson, loadAverageText, rssMb, sleep, startNode, startSim } from './bench-procs';
import { waitFor } from './wait';
import { oomNote, PodLimits, type Limits } from './pod-limits';

import { CONVERGE_OPERATORS, watchShape, type ConvergeOperator, type ShapeFigures } from './bench-converge-shapes';

export { CONVERGE_OPERATORS, type ConvergeOperator } from './bench-converge-shapes';

export interface ConvergeRun {
  components: number;
  operator: ConvergeOperator;
  pacing: 'on' | 'off';
  converged: boolean;
  /** Spawn -> every component in an active session. */
  seconds: number | null;
  /** Spawn -> every component in a started (running) session, none pending: what a slow operator decides. */
  startedSeconds: number | null;
  cpuS: number | null;
  requests: number;
  sessions: number;
  pendingPeak: number;
  deletedWhilePending: number;
  requestsPerSteadyCycle: number | null;
  cpuPerSteadyCycleS: number | null;
  peakRssMb: number | null;
  /** OOM kills inside the container's memory limit (null without limits). */
  oomKills: number | null;
  /** The operator shape's figures (bench-converge-shapes.ts). */
  shape: ShapeFigures;
}

export interface ConvergeOptions {
  nodeOptions: string;
  runtimeEnv?: Record<string, string>;
  nodeFlags?: string[];
  /** The batcher's entry script, relative to the repository (another build, for before/after runs). */
  batcherScript?: string;
  /** Gives up (converged: false) after this long. */
  timeoutMs: number;
  steadyCycles: number;
  log: (m: string) => void;
  /** The container's limits (the manifest's `resources.limits`); none when absent. */
  limits?: Limits;
}

interface Summary {
  sessions: number;
  pending: number;
  pendingPeak: number;
  deletedWhilePending: number;
  activeHosts: number;
}

async function summary(origin: string): Promise<Summary> {
  return (await httpJson('GET', `${origin}/__sim/sessions-summary`)).json as Summary;
}

export async function runConverge(
  n: number,
  operator: ConvergeOperator,
  pacing: 'on' | 'off',
  o: ConvergeOptions,
): Promise<ConvergeRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-converge-'));
  const scenario = path.join(dir, 'scenario.json');
  const hbFile = path.join(dir, 'heartbeat.json');
  const op = CONVERGE_OPERATORS[operator];
  writeFileSync(
    scenario,
    JSON.stringify({
      generate: { components: n, configurations: 3 },
      options: {
        batcher_check_interval: 1,
        batch_window: 0,
        batch_size: 25,
        batcher_pending_timeout: op.pendingTimeoutS,
      },
      operator: op.operator,
    }),
  );
  const { child: sim, origin } = await startSim(scenario);
  const env: Record<string, string> = {
    OTEL_SDK_DISABLED: 'true',
    CFS_API_URL: `${origin}/v3`,
    METRICS_PORT: '0',
    ...o.runtimeEnv,
    NODE_OPTIONS: o.nodeOptions,
    LOG_LEVEL: 'WARNING',
    HEARTBEAT_PATH: hbFile,
    ...(pacing === 'off' ? { BATCHER_PENDING_SESSIONS_CAP: '0' } : {}),
  };
  const cgroup = o.limits ? PodLimits.create(o.limits) : null;
  const batcher = startNode(o.batcherScript ?? 'batcher/dist/main.js', [], env, o.nodeFlags ?? [], cgroup?.prefix());
  const abort = () => (batcher.alive ? null : `batcher exited${oomNote(cgroup)}: ${batcher.tail(5)}`);
  const t0 = Date.now();
  const watch = watchShape(op, origin, hbFile, t0);
  let shape: ShapeFigures | null = null;
  try {
    let seconds: number | null = null;
    let cpuS: number | null = null;
    let requests = 0;
    try {
      await waitFor(async () => ((await summary(origin)).activeHosts >= n ? true : undefined), {
        what: `all ${n} components in active sessions`,
        timeoutMs: o.timeoutMs,
        intervalMs: 50,
        abort,
      });
      seconds = (Date.now() - t0) / 1000;
      cpuS = cpuSeconds(batcher.pid);
      requests = (await simTotal(origin)).total;
    } catch (err) {
      if (!batcher.alive) throw err;
      o.log(`  not converged: ${(err as Error).message}`);
    }
    // Deletions of sessions stuck in pending come after the creates: counted until every session has started.
    let startedSeconds: number | null = null;
    if (seconds !== null) {
      try {
        await waitFor(
          async () => {
            const x = await summary(origin);
            return x.pending === 0 && x.activeHosts >= n ? true : undefined;
          },
          {
            what: 'every session started',
            timeoutMs: Math.max(0, o.timeoutMs - (Date.now() - t0)),
            intervalMs: 100,
            abort,
          },
        );
        startedSeconds = (Date.now() - t0) / 1000;
      } catch (err) {
        if (!batcher.alive) throw err;
        o.log(`  not all started: ${(err as Error).message}`);
      }
    }
    const s = await summary(origin);
    shape = await watch.stop();
    let steady: { requests: number; cpu: number } | null = null;
    if (seconds !== null && o.steadyCycles > 0) {
      const first = await nextSleep(hbFile, (await hb(hbFile))?.cycle ?? 0, 120_000, batcher);
      const r0 = (await simTotal(origin)).total;
      const c0 = cpuSeconds(batcher.pid);
      let h = first;
      for (let i = 0; i < o.steadyCycles; i++) h = await nextSleep(hbFile, h.cycle, 120_000, batcher);
      const c1 = cpuSeconds(batcher.pid);
      const cycles = h.cycle - first.cycle;
      steady = {
        requests: ((await simTotal(origin)).total - r0) / cycles,
        cpu: c0 === null || c1 === null ? NaN : (c1 - c0) / cycles,
      };
    }
    return {
      components: n,
      operator,
      pacing,
      converged: seconds !== null,
      seconds,
      startedSeconds,
      cpuS,
      requests,
      sessions: s.sessions,
      pendingPeak: s.pendingPeak,
      deletedWhilePending: s.deletedWhilePending,
      requestsPerSteadyCycle: steady?.requests ?? null,
      cpuPerSteadyCycleS: steady?.cpu ?? null,
      peakRssMb: rssMb(batcher.pid, 'VmHWM'),
      oomKills: cgroup?.memory()?.oomKills ?? null,
      shape,
    };
  } finally {
    if (shape === null) await watch.stop();
    await batcher.stop();
    cgroup?.remove();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
    await sleep(200);
  }
}

/**
 * Every size x operator x pacing combination, `runs` times each, one after another (each is a load of its own);
 * a failed run is recorded in `errors` and the matrix goes on.
 */
export async function runConvergeMatrix(
  m: {
    sizes: readonly number[];
    operators: readonly ConvergeOperator[];
    pacing: readonly ('on' | 'off')[];
    runs: number;
  },
  o: ConvergeOptions,
  errors: string[],
): Promise<ConvergeRun[]> {
  const out: ConvergeRun[] = [];
  for (const n of m.sizes)
    for (const operator of m.operators)
      for (const p of m.pacing)
        for (let r = 0; r < m.runs; r++) {
          o.log(
            `converge: ${n} pending, ${operator} operator, pacing ${p}, run ${r + 1}/${m.runs} (load ${loadAverageText()})`,
          );
          try {
            const run = await runConverge(n, operator, p, o);
            out.push(run);
            o.log(`  ${JSON.stringify(run)}`);
          } catch (err) {
            errors.push(`converge ${n} ${operator} ${p} run ${r + 1}: ${(err as Error).message}`);
            o.log(`  FAILED: ${(err as Error).message}`);
          }
        }
  return out;
}
