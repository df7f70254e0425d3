/** The e2e pod's scaled-down settings and a small inventory (the manifest's own are in docs/benchmarks.md). */
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec } from '../../scripts/src/pod-spec';
import type { ContainerProbes, ProbeSpec } from '../../scripts/src/probe-spec';
import { REPO_ROOT } from '../../scripts/src/proc';

/**
 * The manifest's own probe settings (the suite runs the shipped values, not scaled ones), read from the
 * rendered manifest as the local pod does. Only the pod's drain grace is shortened, to keep teardown quick.
 * (The FAST_ names stay for the files that import them.)
 */
const SHIPPED = loadPodSpec(REPO_ROOT);
export const FAST_LIVENESS: ProbeSpec = SHIPPED.containers[BATCHER_CONTAINER]!.probes.liveness!;

export const FAST_BATCHER_PROBES: ContainerProbes = {
  ...SHIPPED.containers[BATCHER_CONTAINER]!.probes,
  podTerminationGracePeriodSeconds: 3,
};

export const FAST_SIDECAR_PROBES: ContainerProbes = {
  ...SHIPPED.containers[SIDECAR_CONTAINER]!.probes,
  podTerminationGracePeriodSeconds: 3,
};

/** Sidecar thresholds for the suite (seconds): the shipped freshness limit, a new instance gets 10 s. */
export const FAST_SIDECAR_ENV: Record<string, string> = {
  SIDECAR_STARTUP_GRACE_SECONDS: '10',
  SIDECAR_FRESHNESS_SECONDS:
    SHIPPED.containers[SIDECAR_CONTAINER]!.env.find((e) => e.name === 'SIDECAR_FRESHNESS_SECONDS')?.value ?? '14',
  SIDECAR_PHASE_BUDGETS: 'starting=10,rebuild=10,options=10,check_status=10,collect=10,send=10,stopping=10',
  SIDECAR_PROGRESS_DEADLINE_SECONDS: '12',
  SIDECAR_CFS_POLL_SECONDS: '1',
};

export const FAST_BATCHER_ENV: Record<string, string> = {
  CFS_REQUEST_TIMEOUT_MS: '2000',
  CFS_RETRY_BUDGET_MS: '2000',
  METRICS_PORT: '0',
};

/** A small inventory: `n` components over `configs` configurations of two layers, every one pending. */
export function smallScenario(
  n: number,
  o: {
    configs?: number;
    batchSize?: number;
    checkInterval?: number;
    batchWindow?: number;
    pendingMs?: number;
    runningMs?: number;
    extra?: Record<string, unknown>;
  } = {},
): Record<string, unknown> {
  const configs = o.configs ?? 2;
  const configurations = Array.from({ length: configs }, (_, i) => ({
    name: `cfg-${i}`,
    layers: [
      {
        name: 'base',
        clone_url: `https://vcs.local/vcs/cray/base-${i}.git`,
        commit: `a${i}`.padEnd(40, '0'),
        playbook: 'site.yml',
      },
      {
        name: 'extra',
        clone_url: `https://vcs.local/vcs/cray/extra-${i}.git`,
        commit: `b${i}`.padEnd(40, '0'),
        playbook: 'extra.yml',
      },
    ],
  }));
  const components = Array.from({ length: n }, (_, i) => ({
    id: `x3000c0s${i}b0n0`,
    desired_config: `cfg-${i % configs}`,
    enabled: true,
    error_count: 0,
    tags: i % 3 === 0 ? { role: 'compute', rack: String(i % 2) } : { role: 'compute' },
  }));
  return {
    options: {
      batcher_check_interval: o.checkInterval ?? 1,
      batch_window: o.batchWindow ?? 1,
      batch_size: o.batchSize ?? 5,
      batcher_pending_timeout: 300,
    },
    operator: { pendingMs: o.pendingMs ?? 200, runningMs: o.runningMs ?? 600 },
    configurations,
    components,
    ...o.extra,
  };
}
