/**
 * The e2e pod's containers: the sidecar (unless left out) and the batcher run through the fault fixture
 * (scripts/dist/fixtures/faulty-batcher.js), each started as the image starts it (plain node) with the suite's scaled-down settings,
 * which a test's own env and probes override.
 */
import path from 'node:path';
import type { ContainerLaunch, SimEndpoints } from '../../scripts/src/pod';
import type { ContainerProbes } from '../../scripts/src/probe-spec';
import { REPO_ROOT } from './proc';
import { FAST_BATCHER_ENV, FAST_BATCHER_PROBES, FAST_SIDECAR_ENV, FAST_SIDECAR_PROBES } from './pod-settings';

export interface PodConfig {
  name: string;
  scenario: Record<string, unknown>;
  batcherEnv?: Record<string, string>;
  sidecarEnv?: Record<string, string>;
  batcherProbes?: ContainerProbes;
  sidecarProbes?: ContainerProbes;
  nodeArgs?: string[];
  /** Start without the sidecar (the batcher then has no probes). */
  noSidecar?: boolean;
}

/** Where the containers meet: the shared heartbeat file, and the file that arms the fixture's faults. */
export interface PodFiles {
  heartbeatPath: string;
  faultFile: string;
}

/** The container list for LocalPod, once CFS's address and the health port are known. */
export function podContainers(
  cfg: PodConfig,
  files: PodFiles,
): (sim: SimEndpoints, healthPort: number) => ContainerLaunch[] {
  const common = { OTEL_SDK_DISABLED: 'true', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  return (sim, healthPort) => [
    ...(cfg.noSidecar
      ? []
      : [
          {
            name: 'health-sidecar',
            nodeArgs: [path.join(REPO_ROOT, 'sidecar-health/dist/main.js')],
            env: {
              ...common,
              ...FAST_SIDECAR_ENV,
              HEALTH_PORT: String(healthPort),
              HEALTH_HOST: '127.0.0.1',
              HEARTBEAT_PATH: files.heartbeatPath,
              CFS_API_URL: sim.cfsUrl,
              ...cfg.sidecarEnv,
            },
            probes: cfg.sidecarProbes ?? FAST_SIDECAR_PROBES,
          },
        ]),
    {
      name: 'cfs-batcher',
      // The production start() with the e2e faults around it; inert until the fault file names one.
      nodeArgs: [...(cfg.nodeArgs ?? []), path.join(REPO_ROOT, 'scripts/dist/fixtures/faulty-batcher.js')],
      env: {
        ...common,
        ...FAST_BATCHER_ENV,
        CFS_API_URL: sim.cfsUrl,
        HEARTBEAT_PATH: files.heartbeatPath,
        BATCHER_TEST_FAULT_FILE: files.faultFile,
        ...cfg.batcherEnv,
      },
      probes: cfg.noSidecar ? { podTerminationGracePeriodSeconds: 3 } : (cfg.batcherProbes ?? FAST_BATCHER_PROBES),
    },
  ];
}
