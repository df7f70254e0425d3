/**
 * Case 6: the sidecar crashes and is restarted by its own liveness/exit handling. The batcher must not be
 * restarted because of it: the batcher's (f-1)*p is longer than the sidecar's first restart (the manifest's rule,
 * with the manifest's probes).
 */
import type { ContainerProbes } from '../../scripts/src/prober';
import { FAST_BATCHER_PROBES, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { killAll } from '../helpers/proc';
import { report, waitFor } from '../helpers/wait';

const BATCH = 4;
/**
 * The batcher is killed once the sidecar has been unreachable for about (f-1)*p: (5-1) x 2 s = 8 s with the
 * manifest's probes, longer than a first sidecar restart (immediate, ~0.3 s start-up). The kubelet's back-off
 * before a second restart is 10 s: a second sidecar crash within 10 minutes takes the batcher with it -- by design
 * (issue 14: a crash-looping sidecar may restart the batcher; the CfsBatcherHealthSidecarRestarting alert says so).
 */
const PROBES: ContainerProbes = FAST_BATCHER_PROBES;
const CRASHES = 1;

describe('e2e case 6: sidecar crash and restart', () => {
  let pod: Pod | undefined;
  afterAll(async () => {
    await pod?.close();
    await killAll();
  });

  it('SIGKILL of the sidecar: the sidecar comes back, the batcher is not restarted', async () => {
    pod = new Pod({ name: 'sidecar', scenario: smallScenario(8, { batchSize: BATCH }), batcherProbes: PROBES });
    await pod.start();
    await pod.waitBatcherStarted();
    for (let i = 1; i <= CRASHES; i++) {
      const pid = pod.sidecar!.pid!;
      const t0 = Date.now();
      process.kill(pid, 'SIGKILL');
      await waitFor(async () => pod!.sidecar!.pid !== null && pod!.sidecar!.pid !== pid && (await pod!.livez()).status === 200, { timeoutMs: 40_000, what: 'the sidecar back and live' });
      const back = (Date.now() - t0) / 1000;
      const failed = pod.eventsFor('cfs-batcher', /liveness probe failed/, t0).length;
      report(`sidecar SIGKILL #${i}: /livez back after ${back.toFixed(1)} s; batcher liveness failures meanwhile ${failed}/${PROBES.liveness!.failureThreshold}; batcher restarts ${pod.batcherRestarts}`);
      expect(pod.batcherRestarts).toBe(0);
    }
    await waitAllConfigured(pod, 40_000);
    expect(pod.batcherRestarts).toBe(0);
    expect(pod.sidecar!.snapshot.restarts).toBe(CRASHES);
    await pod.assertInvariants(BATCH);
  }, 120_000);
});
