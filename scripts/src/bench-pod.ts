/**
 * A pod for the benchmarks: the shared assembler (pod.ts) with the manifest's own probes and env (only URLs,
 * paths and ports replaced).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SupervisedContainer } from './container';
import { LocalPod, type PodEvent } from './pod';
import { manifestContainers } from './pod-env';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec, type PodSpec } from './pod-spec';
import type { Proc } from './proc';
import { ROOT } from './bench-procs';

export type { PodEvent } from './pod';

export interface BenchPod {
  spec: PodSpec;
  sim: Proc;
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
  /** Command prefix for the batcher, e.g. its container limits (pod-limits.ts prefix(); it execs node: same pid). */
  batcherPrefix?: string[];
}

export async function startBenchPod(o: BenchPodOptions): Promise<BenchPod> {
  const spec = loadPodSpec(ROOT);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-benchpod-'));
  const scenarioFile = path.join(dir, 'scenario.json');
  writeFileSync(scenarioFile, JSON.stringify(o.scenario));
  const heartbeatPath = path.join(dir, 'hb', 'heartbeat.json');
  const pod = new LocalPod({
    name: 'bench',
    scenarioFile,
    logDir: dir,
    heartbeatPath,
    tickMs: 50,
    simStartMs: 120_000,
    containers: (sim, healthPort) =>
      manifestContainers(spec, {
        id: { podName: 'cfs-batcher-bench', namespace: 'services' },
        local: { CFS_API_URL: sim.cfsUrl, HEARTBEAT_PATH: heartbeatPath, OTEL_SDK_DISABLED: 'true' },
        batcher: { METRICS_PORT: '0', ...o.batcherEnv },
        sidecar: { HEALTH_PORT: String(healthPort), HEALTH_HOST: '127.0.0.1', ...o.sidecarEnv },
        ...(o.batcherScript ? { batcherArgs: [path.join(ROOT, o.batcherScript)] } : {}),
        ...(o.batcherPrefix ? { batcherPrefix: o.batcherPrefix } : {}),
      }),
  });
  await pod.start();
  return {
    spec,
    sim: pod.sim,
    origin: pod.endpoints.cfsOrigin,
    healthPort: pod.healthPort,
    heartbeatPath,
    batcher: pod.container(BATCHER_CONTAINER),
    sidecar: pod.container(SIDECAR_CONTAINER),
    events: pod.events,
    close: async () => {
      await pod.close(40_000);
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
