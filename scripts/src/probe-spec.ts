/**
 * A container's probes as the manifest declares them (the fields of a Kubernetes httpGet probe the project uses),
 * and the worst-case detection time they give.
 */

export type ProbeKind = 'startup' | 'liveness' | 'readiness';
export const PROBE_KINDS: readonly ProbeKind[] = ['startup', 'liveness', 'readiness'];

export interface ProbeSpec {
  path: string;
  port: number;
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
  successThreshold: number;
  /** Probe-level override of the pod's grace period (liveness and startup only). */
  terminationGracePeriodSeconds?: number;
}

export interface ContainerProbes {
  startup?: ProbeSpec;
  liveness?: ProbeSpec;
  readiness?: ProbeSpec;
  /** Pod-level terminationGracePeriodSeconds (kubelet default 30). */
  podTerminationGracePeriodSeconds: number;
}

/**
 * Worst-case time from "the probe endpoint starts failing" to SIGTERM: f*p + t (the endpoint can start failing
 * just after a passing probe, and the last failing probe may wait out its timeout).
 */
export function worstCaseDetectionSeconds(spec: ProbeSpec): number {
  return spec.failureThreshold * spec.periodSeconds + spec.timeoutSeconds;
}
