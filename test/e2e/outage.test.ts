/**
 * CFS outages -- connection refused, 5xx, 30 s latency -- back to back (about a minute in all at the
 * suite's scale). The batcher must not be restarted (a restart cannot fix CFS) and must create sessions again soon
 * after CFS recovers: new work that arrived during the outage is sent once the batcher's current wait ends.
 */
import net from 'node:net';
import { request, sendJson } from '../helpers/http';
import { closePodsAfter, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { report, waitFor } from '../helpers/wait';

const N = 8;
const BATCH = 4;
const OUTAGE_MS = Number(process.env.E2E_OUTAGE_MS ?? 12_000);
const CHECK_INTERVAL_S = 1;
const BATCH_WINDOW_S = 1;
/**
 * Deadline for the first session after recovery: the batcher's longest waiting_for_cfs delay, which doubles up to
 * min(BATCHER_CFS_WAIT_MAX_MS, batcher_check_interval) = the check interval here, then a cycle and the batch
 * window, plus slack for a loaded machine. A deadline for the wait, not a timing assertion.
 */
const RESUME_DEADLINE_S = CHECK_INTERVAL_S + CHECK_INTERVAL_S + BATCH_WINDOW_S + 20;

/** True when the simulator's CFS port accepts a TCP connection (no HTTP request, nothing counted). */
function accepts(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(Number(new URL(url).port), '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

describe('CFS outage', () => {
  let pod: Pod | undefined;
  closePodsAfter('all');

  it('refused, 5xx and 30 s latency: zero restarts, sessions resume after recovery', async () => {
    pod = new Pod({
      name: 'outage',
      scenario: smallScenario(N, {
        batchSize: BATCH,
        runningMs: 300,
        checkInterval: CHECK_INTERVAL_S,
        batchWindow: BATCH_WINDOW_S,
      }),
    });
    await pod.start();
    await pod.waitBatcherStarted();
    await waitAllConfigured(pod, 40_000);
    // The simulator's own faults on its CFS port; the test's reads and writes go to its control port.
    const fault = (action: Record<string, unknown>) => () => pod!.addFault({ id: 'outage', match: '* *', action });
    const clear = async () => void (await request(`${pod!.simOrigin}/__sim/faults/outage`, { method: 'DELETE' }));
    const kinds: Array<[string, () => Promise<void>, () => Promise<void>]> = [
      // The port reopens by itself a little after the sampling below, so the new work lands during the outage.
      [
        'connection refused',
        () => pod!.outage(OUTAGE_MS + 2000),
        async () =>
          void (await waitFor(() => accepts(pod!.cfsUrl), {
            timeoutMs: 10_000,
            intervalMs: 50,
            what: 'the CFS port to reopen',
          })),
      ],
      ['HTTP 503', fault({ type: 'status', status: 503 }), clear],
      ['30 s latency', fault({ type: 'latency', ms: 30_000 }), clear],
    ];
    let round = 0;
    for (const [label, begin, end] of kinds) {
      round++;
      // Start from a batcher that has seen every session finish, so the reset below is new work, not a member
      // of a session it has yet to follow (that one it would rightly mark skipped, as the original does).
      await pod.waitBatcherIdle();
      await begin();
      const t0 = Date.now();
      let livezFailures = 0;
      let samples = 0;
      // Sample liveness through the outage: the fault's own duration, a "must not happen" window (bounded:
      // OUTAGE_MS / 500 samples).
      while (Date.now() - t0 < OUTAGE_MS) {
        samples++;
        if ((await pod.livez()).status !== 200) livezFailures++;
        await new Promise((r) => setTimeout(r, 500));
      }
      // New work that arrived during the outage: reset two configured components to pending (straight to the sim).
      for (const i of [round * 2 - 2, round * 2 - 1]) {
        await sendJson('PATCH', `${pod.simOrigin}/v3/components/x3000c0s${i}b0n0`, { state: [] });
      }
      expect(pod.batcherRestarts).toBe(0);
      // A CFS outage never fails liveness: not one sample, not only "no restart yet".
      expect({ label, livezFailures }).toEqual({ label, livezFailures: 0 });
      expect(samples).toBeGreaterThan(0);
      // No session can be created while the fault is in force: the first one created after this is the resume.
      const tEnd = Date.now();
      await end();
      const tRec = Date.now();
      const first = await waitFor(async () => (await pod!.sessions()).find((s) => s.created_ms >= tEnd), {
        timeoutMs: RESUME_DEADLINE_S * 1000,
        what: `${label}: a session after recovery`,
      }).catch(async (err: Error) => {
        const tail = pod!
          .logLines()
          .slice(-25)
          .map((l) => l.text.slice(0, 300))
          .join('\n');
        throw new Error(
          `${err.message}\nbatcher log tail:\n${tail}\nsimulator stats ${JSON.stringify(await pod!.stats())}`,
        );
      });
      const resume = Math.max(0, first.created_ms - tRec) / 1000;
      report(
        `outage ${label} for ${OUTAGE_MS / 1000} s: ${pod.batcherRestarts} restarts, /livez failed ${livezFailures}/${samples} samples; first session ${resume.toFixed(1)} s after recovery (deadline ${RESUME_DEADLINE_S} s)`,
      );
      await waitAllConfigured(pod, 40_000);
    }
    const log = pod.logLines();
    expect(log.some((l) => /Unable to connect to CFS|ECONNREFUSED|unreachable/i.test(l.text))).toBe(true);
    expect(log.some((l) => /503/.test(l.text))).toBe(true);
    expect(pod.batcherRestarts).toBe(0);
    await pod.assertInvariants(BATCH);
  }, 200_000);
});
