/**
 * Case 4: CFS outages -- connection refused, 5xx, 30 s latency -- back to back (about a minute in all at the
 * suite's scale). The batcher must not be restarted (a restart cannot fix CFS) and must create sessions again soon
 * after CFS recovers: new work that arrived during the outage is sent once the batcher's current wait ends.
 */
import { sendJson } from '../helpers/http';
import { Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import type { ProxyFault } from '../helpers/recording-proxy';
import { killAll } from '../helpers/proc';
import { report, waitFor } from '../helpers/wait';

const N = 8;
const BATCH = 4;
const OUTAGE_MS = Number(process.env.E2E_OUTAGE_MS ?? 12_000);
/** Longest waiting_for_cfs delay of the batcher (cfsWaitMaxMs) + check interval + batch window + CI slack. */
const RESUME_BOUND_S = 60 + 1 + 1 + 10;

describe('e2e case 4: CFS outage', () => {
  let pod: Pod | undefined;
  afterAll(async () => {
    await pod?.close();
    await killAll();
  });

  it('refused, 5xx and 30 s latency: zero restarts, sessions resume after recovery', async () => {
    pod = new Pod({ name: 'outage', scenario: smallScenario(N, { batchSize: BATCH, runningMs: 300 }) });
    await pod.start();
    await pod.waitBatcherStarted();
    await waitAllConfigured(pod, 40_000);
    const kinds: Array<[string, () => Promise<void>, () => Promise<void>]> = [
      ['connection refused', () => pod!.proxy.refuse(), () => pod!.proxy.accept()],
      ['HTTP 503', async () => void (pod!.proxy.fault = { kind: 'status', status: 503 } as ProxyFault), async () => void (pod!.proxy.fault = null)],
      ['30 s latency', async () => void (pod!.proxy.fault = { kind: 'latency', ms: 30_000 } as ProxyFault), async () => void (pod!.proxy.fault = null)],
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
      // Sample liveness through the outage (bounded: OUTAGE_MS / 500 samples).
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
      const postsBefore = pod.proxy.postTimes.length;
      await end();
      const tRec = Date.now();
      await waitFor(() => pod!.proxy.postTimes.length > postsBefore, { timeoutMs: RESUME_BOUND_S * 1000, what: `${label}: a session after recovery` }).catch((err: Error) => {
        const tail = pod!.logLines().slice(-25).map((l) => l.text.slice(0, 300)).join('\n');
        throw new Error(`${err.message}\nbatcher log tail:\n${tail}\nproxy ${JSON.stringify(pod!.proxy.counts)}`);
      });
      const resume = (pod.proxy.postTimes[postsBefore]! - tRec) / 1000;
      report(`outage ${label} for ${OUTAGE_MS / 1000} s: ${pod.batcherRestarts} restarts, /livez failed ${livezFailures}/${samples} samples; first session ${resume.toFixed(1)} s after recovery (bound ${RESUME_BOUND_S} s)`);
      expect(resume).toBeLessThanOrEqual(RESUME_BOUND_S);
      await waitAllConfigured(pod, 40_000);
    }
    const log = pod.logLines();
    expect(log.some((l) => /Unable to connect to CFS|ECONNREFUSED|unreachable/i.test(l.text))).toBe(true);
    expect(log.some((l) => /503/.test(l.text))).toBe(true);
    expect(pod.batcherRestarts).toBe(0);
    await pod.assertInvariants(BATCH);
  }, 200_000);
});
