/**
 * Hang and crash detection with the manifest's probe settings (no scaling). Three hang kinds: the process stopped
 * (SIGSTOP), the event loop blocked (synchronous spin, the fault fixture's busy-loop), and the main loop awaiting a
 * promise that never settles while timers and servers keep the process up (never-settle). Each is timed from the
 * hang (the SIGSTOP, or the fixture's last beat before its fault) to the kubelet model's SIGTERM and SIGKILL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat } from '@cfs-batcher/shared';
import { EVAL_INTERVAL_MS } from '@cfs-batcher/sidecar-health';
import { BeatMonitor, type GapSummary } from './bench-beats';
import { benchScenario, startBenchPod, type BenchPod } from './bench-pod';
import { waitFor } from './wait';
import { worstCaseDetectionSeconds } from './probe-spec';

export const HANG_KINDS = ['sigstop', 'spin', 'never-settle'] as const;
export type DetectKind = (typeof HANG_KINDS)[number] | 'crash';

export interface DetectRun {
  kind: DetectKind;
  /** Hang to SIGTERM (hang kinds) or to the exit being seen (crash). */
  detectS: number;
  /** Hang to SIGKILL (null when the process exited on SIGTERM, or for a crash). */
  killS: number | null;
  /** Hang to the new instance completing its first cycle. */
  recoverS: number;
  boundS: number;
  /** Beat gaps before the fault (steady state). */
  gaps: GapSummary;
}

/** Worst case from a hung loop to SIGKILL: T + e + f*p + t + g with T = SIDECAR_FRESHNESS_SECONDS. */
export function hangBoundSeconds(pod: BenchPod): number {
  const live = pod.spec.containers['cfs-batcher']!.probes.liveness!;
  const side = pod.spec.containers['health-sidecar']!;
  const env = (n: string, d: string): number => Number(side.env.find((e) => e.name === n)?.value ?? d);
  const grace = live.terminationGracePeriodSeconds ?? pod.spec.podTerminationGracePeriodSeconds;
  return env('SIDECAR_FRESHNESS_SECONDS', '10') + EVAL_INTERVAL_MS / 1000 + worstCaseDetectionSeconds(live) + grace;
}

/** A batcher in steady state: past its startup probe and two cycles in, so its start-up grace no longer applies. */
async function healthy(pod: BenchPod): Promise<number> {
  await waitFor(() => (pod.batcher.snapshot.startupPassed && pod.batcher.pid !== null ? true : undefined), {
    what: 'a healthy batcher',
    timeoutMs: 200_000,
    intervalMs: 100,
  });
  const pid = pod.batcher.pid ?? -1;
  await waitFor(
    async () => {
      const r = await readHeartbeat(pod.heartbeatPath);
      return r.ok && r.heartbeat.pid === pid && r.heartbeat.cycle >= 2 ? true : undefined;
    },
    { what: 'two completed cycles', timeoutMs: 200_000, intervalMs: 100 },
  );
  return pid;
}

export async function runDetect(kind: DetectKind, o: { checkIntervalS?: number } = {}): Promise<DetectRun> {
  // A 1 s check interval: with per-second beats the interval is not in the formula, and it makes a batcher that is
  // silent while it sleeps (earlier builds beat only at phase changes) beat as often as one that beats every second.
  const scenario = {
    ...benchScenario(),
    options: { batcher_check_interval: o.checkIntervalS ?? 1, batch_window: 1, batch_size: 10 },
  };
  const faultDir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-fault-'));
  const faultFile = path.join(faultDir, 'fault');
  const pod = await startBenchPod({
    scenario,
    batcherScript: 'scripts/dist/fixtures/faulty-batcher.js',
    batcherEnv: { BATCHER_TEST_FAULT_FILE: faultFile },
  });
  const beats = new BeatMonitor(pod.heartbeatPath).start();
  try {
    const pid = await healthy(pod);
    await waitFor(() => (beats.gaps.length >= 10 ? true : undefined), {
      what: 'ten beats',
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const gaps = beats.stop();
    beats.start();
    let t0 = Date.now();
    if (kind === 'sigstop') process.kill(pid, 'SIGSTOP');
    else if (kind === 'crash') process.kill(pid, 'SIGKILL');
    else writeFileSync(faultFile, kind === 'spin' ? 'busy-loop' : 'never-settle');
    const term = await waitFor(
      () => pod.events.find((e) => e.at >= t0 && e.container === 'cfs-batcher' && /SIGTERM|exited/.test(e.message)),
      { what: 'the kubelet to act', timeoutMs: 200_000, intervalMs: 50 },
    );
    // The fixture's faults fire at its next cycle start, right after a beat: that last beat is when the loop stopped.
    if (kind === 'spin' || kind === 'never-settle') t0 = beats.lastBeatMs ?? t0;
    const kill =
      kind === 'crash'
        ? null
        : await waitFor(
            () =>
              pod.events.find(
                (e) => e.at >= term.at && e.container === 'cfs-batcher' && /: sending SIGKILL$|exited/.test(e.message),
              ),
            { what: 'SIGKILL or exit', timeoutMs: 60_000, intervalMs: 50 },
          );
    await waitFor(
      async () => {
        if (pod.batcher.pid === null || pod.batcher.pid === pid) return undefined;
        const r = await readHeartbeat(pod.heartbeatPath);
        return r.ok && r.heartbeat.pid === pod.batcher.pid && r.heartbeat.cycle >= 1 ? true : undefined;
      },
      { what: 'the restarted batcher to complete a cycle', timeoutMs: 200_000, intervalMs: 50 },
    );
    return {
      kind,
      detectS: (term.at - t0) / 1000,
      killS: kill ? (kill.at - t0) / 1000 : null,
      recoverS: (Date.now() - t0) / 1000,
      boundS: hangBoundSeconds(pod),
      gaps,
    };
  } finally {
    beats.stop();
    await pod.close();
    rmSync(faultDir, { recursive: true, force: true });
  }
}
