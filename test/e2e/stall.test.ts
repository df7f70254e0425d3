/**
 * A batcher that loops (fresh heartbeats every cycle) but never sends a session -- a simulated internal
 * fault -- must fail liveness on the progress rule within the deadline. The same stall while the batcher is in its
 * 20-failures backoff, or while batcher_disable is set, is legitimate and must not.
 */
import { writeFileSync } from 'node:fs';
import { closePodsAfter, FAST_LIVENESS, FAST_SIDECAR_ENV, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { holdsFor, report, waitFor } from '../helpers/wait';

const DEADLINE = Number(FAST_SIDECAR_ENV.SIDECAR_PROGRESS_DEADLINE_SECONDS);
const POLL = Number(FAST_SIDECAR_ENV.SIDECAR_CFS_POLL_SECONDS);
const L = FAST_LIVENESS;
/** Progress deadline + one CFS poll + f*p + t + g. */
const BOUND =
  DEADLINE + POLL + L.failureThreshold * L.periodSeconds + L.timeoutSeconds + (L.terminationGracePeriodSeconds ?? 3);
const SLACK = 10;
/** Long enough past the deadline that a wrong no_progress verdict would have restarted the batcher. */
const QUIET_MS = (DEADLINE + L.failureThreshold * L.periodSeconds + 3) * 1000;

describe('stalled progress', () => {
  let pod: Pod | undefined;
  closePodsAfter('each');

  it('loops but never sends: liveness fails on no_progress within the deadline, recovers once the fault is gone', async () => {
    pod = new Pod({ name: 'stall', scenario: smallScenario(8, { batchSize: 4 }) });
    writeFileSync(pod.faultFile, 'never-send');
    const t0 = Date.now();
    await pod.start();
    await pod.waitBatcherStarted();
    await waitFor(() => pod!.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0], {
      timeoutMs: (BOUND + 15 + SLACK) * 1000,
      what: 'no_progress to fail liveness',
    });
    const term = pod.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0]!;
    const started = pod.events.find((e) => e.container === 'cfs-batcher' && /startup probe passed/.test(e.message))!;
    report(
      `never-send: liveness failed ${((term.at - started.at) / 1000).toFixed(1)} s after the batcher started (bound ${BOUND} s) -- ${term.message.slice(0, 220)}`,
    );
    expect(term.message).toMatch(/no_progress/);
    expect((await pod.sessions()).length).toBe(0);
    pod.clearFault();
    await waitAllConfigured(pod, 60_000);
    await pod.assertInvariants(4);
  }, 120_000);

  it('the same stall during backoff and during batcher_disable: no restart', async () => {
    const n = 20; // exactly the 20 failures that halt session creation
    pod = new Pod({
      name: 'stall-legit',
      scenario: smallScenario(n, {
        batchSize: 1,
        configs: 1,
        pendingMs: 100,
        runningMs: 200,
        extra: { outcomes: { sessions: [{ mode: 'clone_failure', count: 20 }] } },
      }),
    });
    await pod.start();
    // Backoff min(batcher_max_backoff, 60) = 30 s: longer than the quiet window below.
    await pod.patchOptions({ batcher_max_backoff: 30 });
    await pod.waitBatcherStarted();
    await waitFor(() => pod!.logLines().some((l) => /Halting session creation/.test(l.text)), {
      timeoutMs: 60_000,
      what: 'the 20-failures backoff',
    });
    const tb = Date.now();
    const createdAtBackoff = await pod.sessionPosts();
    const quietBackoff = await holdsFor(() => pod!.batcherRestarts === 0, QUIET_MS, 250);
    const livezDuring = await pod.livez();
    const createdAfter = await pod.sessionPosts();
    report(
      `backoff: ${((Date.now() - tb) / 1000).toFixed(0)} s without sessions (${createdAfter - createdAtBackoff} created), restarts ${pod.batcherRestarts}, /livez ${livezDuring.status} ${livezDuring.reason}`,
    );
    expect(quietBackoff).toBe(true);
    expect(createdAfter).toBe(createdAtBackoff);
    expect(livezDuring.status).toBe(200);

    await pod.patchOptions({ batcher_disable: true });
    const td = Date.now();
    const quietDisabled = await holdsFor(() => pod!.batcherRestarts === 0, QUIET_MS, 250);
    const livezDisabled = await pod.livez();
    report(
      `batcher_disable: ${((Date.now() - td) / 1000).toFixed(0)} s with pending components, restarts ${pod.batcherRestarts}, /livez ${livezDisabled.status} ${livezDisabled.reason}`,
    );
    expect(quietDisabled).toBe(true);
    expect(livezDisabled.status).toBe(200);

    await pod.patchOptions({ batcher_disable: false });
    await waitAllConfigured(pod, 60_000);
    expect(pod.batcherRestarts).toBe(0);
    await pod.assertInvariants(1);
  }, 150_000);
});
