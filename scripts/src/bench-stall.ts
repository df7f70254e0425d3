/**
 * "Alive but useless" detection with CSM's options (batcher_check_interval 10, batch_window 60) and the manifest's
 * probes: a healthy batcher has its send step switched off (the fault fixture's never-send: it keeps cycling,
 * collecting and beating) while new schedulable work arrives. Timed from the switch to the kubelet model's SIGTERM;
 * the bound is the progress deadline + one sidecar CFS poll + one evaluation + the liveness probe's f*p + t.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat } from '@cfs-batcher/shared';
import { EVAL_INTERVAL_MS, PROGRESS_INTERVALS } from '@cfs-batcher/sidecar-health';
import { startBenchPod } from './bench-pod';
import { httpJson, sleep } from './bench-procs';
import { waitFor } from './wait';
import { worstCaseDetectionSeconds } from './probe-spec';

export interface StallRun {
  /** Send switched off to SIGTERM. */
  detectS: number;
  boundS: number;
  /** Every reason the sidecar gave for restarting its stall clock after the switch (from /status, sampled). */
  resetReasons: string[];
  /** The /livez reason the kubelet model saw fail. */
  message: string;
}

/** CSM's defaults: the deadline the sidecar computes is 60 + 6 x 10 = 120 s. */
const CSM_OPTIONS = { batcher_check_interval: 10, batch_window: 60, batch_size: 10 };

export async function runNeverSend(): Promise<StallRun> {
  const faultDir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-stall-'));
  const faultFile = path.join(faultDir, 'fault');
  const pod = await startBenchPod({
    scenario: {
      generate: { components: 40, configurations: 2 },
      options: CSM_OPTIONS,
      operator: { pendingMs: 2000, runningMs: 30_000 },
    },
    batcherScript: 'scripts/dist/fixtures/faulty-batcher.js',
    batcherEnv: { BATCHER_TEST_FAULT_FILE: faultFile },
  });
  const status = async (): Promise<Record<string, Record<string, unknown>> | null> =>
    (await httpJson('GET', `http://127.0.0.1:${pod.healthPort}/status`, undefined, 3000).catch(() => null))
      ?.json as Record<string, Record<string, unknown>> | null;
  try {
    await waitFor(() => pod.batcher.snapshot.startupPassed || undefined, {
      what: 'the batcher past its startup probe',
      timeoutMs: 200_000,
    });
    // steady state: the first wave created and finished (nothing held), two cycles in
    await waitFor(
      async () => {
        const r = await readHeartbeat(pod.heartbeatPath);
        const c = r.ok ? r.heartbeat.counters : null;
        return c && r.ok && r.heartbeat.cycle >= 2 && c.sessions_created_total > 0 && c.batches_active === 0
          ? true
          : undefined;
      },
      { what: 'the first wave done', timeoutMs: 300_000, intervalMs: 500 },
    );
    const startRestarts = pod.batcher.snapshot.restarts;
    writeFileSync(faultFile, 'never-send');
    const t0 = Date.now();
    const r = await httpJson('POST', `${pod.origin}/__sim/generate`, { components: 10, configurations: 2 });
    if (r.status >= 300) throw new Error(`generate refused: HTTP ${r.status}`);
    const resets = new Set<string>();
    let lastReset: unknown = null;
    const side = pod.spec.containers['health-sidecar']!;
    const env = (n: string, d: string): number => Number(side.env.find((e) => e.name === n)?.value ?? d);
    const live = pod.spec.containers['cfs-batcher']!.probes.liveness!;
    const deadlineS = 60 + PROGRESS_INTERVALS * 10;
    const boundS =
      deadlineS + env('SIDECAR_CFS_POLL_SECONDS', '10') + EVAL_INTERVAL_MS / 1000 + worstCaseDetectionSeconds(live);
    const term = await waitFor(
      async () => {
        const e = pod.events.find((x) => x.at >= t0 && x.container === 'cfs-batcher' && /SIGTERM/.test(x.message));
        if (e) return e;
        const s = await status();
        const p = s?.progress;
        if (p && p.last_reset_seconds_ago !== null && p.last_reset_reason !== lastReset) {
          lastReset = p.last_reset_reason;
          if (Number(p.last_reset_seconds_ago) * 1000 <= Date.now() - t0) resets.add(String(p.last_reset_reason));
        }
        await sleep(500);
        return undefined;
      },
      { what: 'the kubelet to restart the useless batcher', timeoutMs: (boundS + 120) * 1000, intervalMs: 0 },
    );
    if (pod.batcher.snapshot.restarts < startRestarts) throw new Error('restart count went backwards');
    return { detectS: (term.at - t0) / 1000, boundS, resetReasons: [...resets], message: term.message.slice(0, 300) };
  } finally {
    await pod.close();
    rmSync(faultDir, { recursive: true, force: true });
  }
}
