/** The e2e pod's scaled-down settings and a small inventory (the manifest's own are in docs/benchmarks.md). */
import { MANIFEST_HEALTH_PORT } from '../../scripts/src/pod';
import type { ContainerProbes, ProbeSpec } from '../../scripts/src/prober';

/** A probe of the sidecar's health port, every second with a 1 s timeout (the manifest's are p=10 t=3). */
const fastProbe = (path: string, failureThreshold: number): ProbeSpec => ({
  path,
  port: MANIFEST_HEALTH_PORT,
  initialDelaySeconds: 0,
  periodSeconds: 1,
  timeoutSeconds: 1,
  failureThreshold,
  successThreshold: 1,
});

/** Scaled-down probe settings (the manifest's are p=10 t=3 f=3, grace 10; see docs/benchmarks.md for those). */
export const FAST_LIVENESS: ProbeSpec = { ...fastProbe('/livez', 3), terminationGracePeriodSeconds: 2 };

export const FAST_BATCHER_PROBES: ContainerProbes = {
  startup: fastProbe('/startupz', 60),
  liveness: FAST_LIVENESS,
  podTerminationGracePeriodSeconds: 3,
};

export const FAST_SIDECAR_PROBES: ContainerProbes = {
  startup: fastProbe('/healthz', 30),
  liveness: fastProbe('/healthz', 3),
  podTerminationGracePeriodSeconds: 3,
};

/** Sidecar thresholds for the suite (seconds): fresh within interval + 3 s, a new instance gets 10 s. */
export const FAST_SIDECAR_ENV: Record<string, string> = {
  SIDECAR_STARTUP_GRACE_SECONDS: '10',
  SIDECAR_CYCLE_BUDGET_SECONDS: '4',
  SIDECAR_PHASE_BUDGETS: 'starting=10,rebuild=10,options=10,check_status=10,collect=10,send=10,stopping=10',
  SIDECAR_PROGRESS_DEADLINE_SECONDS: '12',
  SIDECAR_CFS_POLL_SECONDS: '1',
  SIDECAR_CFS_TIMEOUT_MS: '1000',
  SIDECAR_EVAL_INTERVAL_MS: '250',
  CFS_RETRY_BUDGET_MS: '0',
};

export const FAST_BATCHER_ENV: Record<string, string> = {
  CFS_CONNECT_TIMEOUT_MS: '1000',
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
