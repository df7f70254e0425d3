/**
 * A pod for the benchmarks: simulator + batcher + sidecar, the two containers supervised by the local pod's
 * kubelet model with the manifest's own probes and env (only URLs, paths and ports replaced).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SupervisedContainer } from './container';
import { containerEnv } from './pod-env';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec, type PodSpec } from './pod-spec';
import { ROOT, sleep, startSim, type Child } from './bench-procs';
import { freePort } from './local-pod';

export interface PodEvent {
  at: number;
  container: string;
  message: string;
}

export interface BenchPod {
  spec: PodSpec;
  sim: Child;
  origin: string;
  healthPort: number;
  heartbeatPath: string;
  batcher: SupervisedContainer;
  sidecar: SupervisedContainer;
  events: PodEvent[];
  close(): Promise<void>;
}

export interface BenchPodOptions {
  scenario: Record<string, unknown>;
  sidecarEnv?: Record<string, string>;
  batcherEnv?: Record<string, string>;
  /** Script run as the batcher (default batcher/dist/main.js; the fault fixture for hang kinds). */
  batcherScript?: string;
  /** Command prefix for the batcher, e.g. ['taskset', '-c', '0'] (it execs node: same pid). */
  batcherPrefix?: string[];
}

export async function startBenchPod(o: BenchPodOptions): Promise<BenchPod> {
  const spec = loadPodSpec(ROOT);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-benchpod-'));
  const scenarioFile = path.join(dir, 'scenario.json');
  writeFileSync(scenarioFile, JSON.stringify(o.scenario));
  mkdirSync(path.join(dir, 'hb'));
  const heartbeat = path.join(dir, 'hb', 'heartbeat.json');
  const { child: sim, origin } = await startSim(scenarioFile);
  const healthPort = await freePort();
  const events: PodEvent[] = [];
  const onMessage = (container: string, message: string): void => void events.push({ at: Date.now(), container, message });
  const id = { podName: 'cfs-batcher-bench', namespace: 'services' };
  const local = { CFS_API_URL: `${origin}/v3`, HEARTBEAT_PATH: heartbeat, OTEL_SDK_DISABLED: 'true', CA_CERT: undefined, OTEL_EXPORTER_OTLP_ENDPOINT: undefined };
  const mapPort = (p: number): number => (p === 8081 ? healthPort : p);
  const b = spec.containers[BATCHER_CONTAINER]!;
  const s = spec.containers[SIDECAR_CONTAINER]!;
  const script = path.join(ROOT, o.batcherScript ?? 'batcher/dist/main.js');
  const [command, ...prefixArgs] = [...(o.batcherPrefix ?? []), process.execPath];
  const batcher = new SupervisedContainer({
    name: BATCHER_CONTAINER,
    command: command!,
    args: [...prefixArgs, script],
    cwd: ROOT,
    env: containerEnv(b, id, { ...local, METRICS_PORT: '0', ...o.batcherEnv }, process.env),
    probes: b.probes,
    mapPort,
    logFile: path.join(dir, 'batcher.log'),
    onMessage,
  });
  const sidecar = new SupervisedContainer({
    name: SIDECAR_CONTAINER,
    command: process.execPath,
    args: [path.join(ROOT, 'sidecar-health/dist/main.js')],
    cwd: ROOT,
    env: containerEnv(s, id, { ...local, HEALTH_PORT: String(healthPort), HEALTH_HOST: '127.0.0.1', ...o.sidecarEnv }, process.env),
    probes: s.probes,
    mapPort,
    logFile: path.join(dir, 'sidecar.log'),
    onMessage,
  });
  const ticker = setInterval(() => {
    sidecar.tick();
    batcher.tick();
  }, 50);
  sidecar.tick();
  batcher.tick();
  return {
    spec,
    sim,
    origin,
    healthPort,
    heartbeatPath: heartbeat,
    batcher,
    sidecar,
    events,
    close: async () => {
      const stopping = Promise.all([batcher.stop(), sidecar.stop()]);
      let cap: NodeJS.Timeout | undefined;
      await Promise.race([stopping, new Promise((r) => (cap = setTimeout(r, 40_000)))]);
      clearTimeout(cap);
      clearInterval(ticker);
      batcher.closeLog();
      sidecar.closeLog();
      await sim.stop();
      await sleep(100);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A small all-pending inventory with short options (cycle every second). */
export function benchScenario(n = 30): Record<string, unknown> {
  return {
    generate: { components: n, configurations: 2 },
    options: { batcher_check_interval: 1, batch_window: 1, batch_size: 10 },
    operator: { pendingMs: 200, runningMs: 800 },
  };
}
