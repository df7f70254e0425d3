/**
 * The sidecar crashes and is restarted by its own liveness/exit handling. The batcher must not be
 * restarted because of it: while the sidecar is gone its probes fail to connect, and the sidecar that comes back
 * judges the running batcher live at once (it never answers 503 for a healthy batcher that it has not seen start).
 *
 * The test asserts that order of events, not a start-up time. The batcher's liveness window is set wider than the
 * test's own deadline for the sidecar to come back, so a slow start on a loaded machine cannot close it; whether the
 * manifest's window, (f-1) x p = 20 s, outlasts a sidecar restart is a property of the manifest's numbers (the
 * kubelet's back-offs of 0 s, 10 s, 20 s, 40 s: a third crash within 10 minutes takes the batcher with it, by
 * design, as nothing vouches for it then), measured by `npm run bench`, not by this test.
 */
import type { ContainerProbes } from '../../scripts/src/probe-spec';
import { closePodsAfter, FAST_BATCHER_PROBES, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { report, waitFor } from '../helpers/wait';

const BATCH = 4;
/** The deadline for the sidecar to be back; the batcher's window (1 s x 600) is far wider. */
const BACK_WITHIN_MS = 90_000;
const PROBES: ContainerProbes = {
  ...FAST_BATCHER_PROBES,
  liveness: { ...FAST_BATCHER_PROBES.liveness!, periodSeconds: 1, failureThreshold: 600 },
};

describe('sidecar crash and restart', () => {
  let pod: Pod | undefined;
  closePodsAfter('all');

  it('SIGKILL of the sidecar, twice: the sidecar comes back judging the batcher live; the batcher is never restarted', async () => {
    pod = new Pod({ name: 'sidecar', scenario: smallScenario(8, { batchSize: BATCH }), batcherProbes: PROBES });
    const p = pod;
    await p.start();
    await p.waitBatcherStarted();
    const batcherPid = p.batcherPid();
    for (let i = 1; i <= 2; i++) {
      const pid = p.sidecar!.pid!;
      const t0 = Date.now();
      process.kill(pid, 'SIGKILL');
      // 1. The batcher's probes see the sidecar gone (so the window really was open)... The first restart follows
      // at once (back-off 0 s), so a 1 s probe may or may not land in that gap; the second waits out a 10 s back-off,
      // so its probes must fail.
      if (i === 2) {
        await waitFor(() => p.eventsFor('cfs-batcher', /liveness probe failed/, t0)[0], {
          timeoutMs: 30_000,
          what: 'a failed batcher liveness probe',
        });
      }
      // 2. ...the kubelet model restarts the sidecar...
      const started = await waitFor(() => p.eventsFor('health-sidecar', /^started pid/, t0)[0], {
        timeoutMs: BACK_WITHIN_MS,
        what: 'the sidecar restarted',
      });
      // 3. ...and the batcher's next liveness probe, answered by the new sidecar, succeeds.
      await waitFor(() => p.batcher.snapshot.probes.liveness.successes > 0, {
        timeoutMs: BACK_WITHIN_MS,
        what: 'a batcher liveness success from the new sidecar',
      });
      const failures = p.eventsFor('cfs-batcher', /liveness probe failed/, t0);
      report(
        `sidecar SIGKILL #${i}: restarted after ${((started.at - t0) / 1000).toFixed(1)} s; batcher liveness failures meanwhile ${failures.length}; batcher restarts ${p.batcherRestarts}`,
      );
      // Every failure was the sidecar being unreachable, never a verdict against the batcher.
      expect(failures.map((f) => f.message).filter((m) => /HTTP \d/.test(m))).toEqual([]);
      expect(p.eventsFor('cfs-batcher', /sending SIG(TERM|KILL)/, t0)).toEqual([]);
      expect(p.batcherRestarts).toBe(0);
      expect(p.batcherPid()).toBe(batcherPid);
    }
    await waitAllConfigured(p, 40_000);
    expect(p.batcherRestarts).toBe(0);
    expect(p.sidecar!.snapshot.restarts).toBe(2);
    await p.assertInvariants(BATCH);
  }, 240_000);
});
