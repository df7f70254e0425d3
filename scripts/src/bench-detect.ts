/**
 * Hang and crash detection with the manifest's probe settings (no scaling): SIGSTOP the batcher and time the
 * kubelet model's SIGTERM/SIGKILL and the new instance passing its startup probe; SIGKILL it and time the recovery.
 */
import { benchScenario, startBenchPod, type BenchPod } from './bench-pod';
import { readHeartbeat } from '@cfs-batcher/shared';
import { waitUntil } from './bench-procs';
import { worstCaseDetectionSeconds } from './prober';

export interface DetectRun {
  kind: 'hang' | 'crash';
  /** Fault to SIGTERM (hang) or to the exit being seen (crash). */
  detectS: number;
  /** Fault to SIGKILL (hang only). */
  killS: number | null;
  /** Fault to the new instance completing its first cycle. */
  recoverS: number;
  boundS: number;
}

/** Worst case from a hung loop to SIGKILL: T + f*p + t + g with T = check interval + cycle budget. */
export function hangBoundSeconds(pod: BenchPod, checkIntervalS: number): number {
  const live = pod.spec.containers['cfs-batcher']!.probes.liveness!;
  const side = pod.spec.containers['health-sidecar']!;
  const budget = Number(side.env.find((e) => e.name === 'SIDECAR_CYCLE_BUDGET_SECONDS')?.value ?? '30');
  const grace = live.terminationGracePeriodSeconds ?? pod.spec.podTerminationGracePeriodSeconds;
  return checkIntervalS + budget + worstCaseDetectionSeconds(live) + grace;
}

/**
 * A batcher in steady state: past its startup probe and two cycles into its work, so the sidecar has seen it make
 * progress and its start-up grace no longer applies (a hang in the first seconds of an instance is covered by the
 * grace instead: see docs/deployment.md).
 */
async function healthy(pod: BenchPod): Promise<number> {
  const before = pod.batcher.snapshot.restarts;
  await waitUntil('a healthy batcher', 200_000, () => (pod.batcher.snapshot.startupPassed && pod.batcher.snapshot.restarts === before ? true : undefined), 100);
  const pid = pod.batcher.pid ?? -1;
  await waitUntil('two completed cycles', 200_000, async () => {
    const r = await readHeartbeat(pod.heartbeatPath);
    return r.ok && r.heartbeat.pid === pid && r.heartbeat.cycle >= 2 ? true : undefined;
  }, 100);
  return pid;
}

export async function runDetect(kind: 'hang' | 'crash'): Promise<DetectRun> {
  // check interval 10 s = the CFS default the manifest's formula uses.
  const scenario = { ...benchScenario(), options: { batcher_check_interval: 10, batch_window: 1, batch_size: 10 } };
  const pod = await startBenchPod({ scenario });
  try {
    const pid = await healthy(pod);
    const restarts = pod.batcher.snapshot.restarts;
    const t0 = Date.now();
    process.kill(pid, kind === 'hang' ? 'SIGSTOP' : 'SIGKILL');
    const term = await waitUntil('the kubelet to act', 200_000, () => pod.events.find((e) => e.at >= t0 && e.container === 'cfs-batcher' && /SIGTERM|exited/.test(e.message)), 50);
    const kill = kind === 'hang' ? await waitUntil('SIGKILL', 60_000, () => pod.events.find((e) => e.at >= t0 && e.container === 'cfs-batcher' && /: sending SIGKILL$/.test(e.message)), 50) : null;
    // Recovered = the new process has written its own heartbeat after a completed cycle (the startup gate can open
    // on the previous instance's still-fresh file, so it is not the measure).
    await waitUntil('the restarted batcher to complete a cycle', 200_000, async () => {
      if (pod.batcher.snapshot.restarts <= restarts || pod.batcher.pid === null) return undefined;
      const r = await readHeartbeat(pod.heartbeatPath);
      return r.ok && r.heartbeat.pid === pod.batcher.pid && r.heartbeat.cycle >= 1 ? true : undefined;
    }, 50);
    return {
      kind,
      detectS: (term.at - t0) / 1000,
      killS: kill ? (kill.at - t0) / 1000 : null,
      recoverS: (Date.now() - t0) / 1000,
      boundS: hangBoundSeconds(pod, 10),
    };
  } finally {
    await pod.close();
  }
}
