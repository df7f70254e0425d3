/**
 * Case 6: the sidecar crashes and is restarted by its own liveness/exit handling. The batcher must not be
 * restarted because of it: the batcher's f*p is longer than the sidecar's restart (the manifest's rule, scaled).
 */
import type { ContainerProbes } from '../../scripts/src/prober';
import { FAST_BATCHER_PROBES, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { killAll } from '../helpers/proc';
import { report, waitFor } from '../helpers/wait';

const BATCH = 4;
/**
 * The batcher is killed once the sidecar has been unreachable for about (f-1)*p. Here (3-1) x 8 s = 16 s: longer than
 * a first sidecar restart (about 1 s) and than the kubelet's 10 s back-off before a second one. The manifest has
 * (3-1) x 10 s = 20 s against back-offs of 0 s, 10 s, 20 s, 40 s: a third sidecar crash within 10 minutes (20 s
 * back-off + start) takes the batcher with it -- by design, nothing then vouches for it.
 */
const PROBES: ContainerProbes = { ...FAST_BATCHER_PROBES, liveness: { ...FAST_BATCHER_PROBES.liveness!, periodSeconds: 8 } };

describe('e2e case 6: sidecar crash and restart', () => {
  let pod: Pod | undefined;
  afterAll(async () => {
    await pod?.close();
    await killAll();
  });

  it('SIGKILL of the sidecar, twice: the sidecar comes back, the batcher is never restarted', async () => {
    pod = new Pod({ name: 'sidecar', scenario: smallScenario(8, { batchSize: BATCH }), batcherProbes: PROBES });
    await pod.start();
    await pod.waitBatcherStarted();
    for (let i = 1; i <= 2; i++) {
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
    expect(pod.sidecar!.snapshot.restarts).toBe(2);
    await pod.assertInvariants(BATCH);
  }, 120_000);
});
