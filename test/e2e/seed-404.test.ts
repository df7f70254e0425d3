/**
 * The seed of the original incident: GET /v3/sessions answers 404 (with and without a body) for the first
 * calls after start, then alternating with good answers. The batcher must neither die silently nor flood CFS, must
 * not be restarted (CFS trouble is a dependency wait), and must configure every pending component once CFS answers.
 */
import { closePodsAfter, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { report, waitFor } from '../helpers/wait';

const N = 12;
const BATCH = 5;

describe('GET /v3/sessions answers 404 at start-up', () => {
  let pod: Pod | undefined;
  closePodsAfter('each');

  it.each([
    ['with a problem body', { type: 'status', status: 404 }],
    ['with no body', { type: 'status', status: 404, body: 'empty' }],
  ])(
    '404 %s for the first 3 calls: waits, does not flood, then configures everything',
    async (_label, action) => {
      pod = new Pod({
        name: 'seed404',
        scenario: smallScenario(N, {
          batchSize: BATCH,
          extra: { faults: [{ match: 'GET /v3/sessions', action, scope: { times: 3 } }] },
        }),
      });
      const t0 = Date.now();
      await pod.start();
      const took = await waitAllConfigured(pod, 60_000);
      const stats = await pod.stats();
      const sessionGets = stats.byRouteStatus['GET /v3/sessions 404'] ?? 0;
      const elapsed = (Date.now() - t0) / 1000;
      report(
        `seed 404 ${_label}: ${sessionGets} x 404 answered, all ${N} configured ${took.toFixed(1)} s after start; ${stats.total} CFS requests in ${elapsed.toFixed(1)} s; restarts ${pod.batcherRestarts}`,
      );
      expect(sessionGets).toBe(3);
      // The original's rebuild spun with no sleep: hundreds of calls a second. With backoff it is a handful.
      expect(stats.byRoute['GET /v3/sessions'] ?? 0).toBeLessThan(60);
      expect(pod.batcherRestarts).toBe(0);
      const lines = pod.logLines();
      // Not silent: each failure is logged with what CFS said.
      expect(lines.filter((l) => /404/.test(l.text) && l.json?.level !== 'DEBUG').length).toBeGreaterThanOrEqual(1);
      expect(lines.some((l) => /Rebuilt previous state/.test(l.text))).toBe(true);
      await pod.assertInvariants(BATCH);
    },
    90_000,
  );

  it('404 alternating with good answers: still no restart, no flood, everything configured once', async () => {
    pod = new Pod({
      name: 'seed404alt',
      scenario: smallScenario(N, {
        batchSize: BATCH,
        extra: {
          faults: [
            {
              match: 'GET /v3/sessions*',
              action: { type: 'status', status: 404 },
              scope: { every: 2, durationMs: 15_000 },
            },
          ],
        },
      }),
    });
    await pod.start();
    const took = await waitAllConfigured(pod, 60_000);
    const stats = await pod.stats();
    const notFound =
      (stats.byRouteStatus['GET /v3/sessions 404'] ?? 0) +
      Object.entries(stats.byRouteStatus)
        .filter(([k]) => /^GET \/v3\/sessions\/\{?.*404$/.test(k))
        .reduce((a, [, v]) => a + v, 0);
    report(
      `seed 404 alternating: ${notFound} x 404 among ${stats.byRoute['GET /v3/sessions'] ?? 0} session lists; all ${N} configured in ${took.toFixed(1)} s; restarts ${pod.batcherRestarts}`,
    );
    expect(pod.batcherRestarts).toBe(0);
    const sessions = await pod.sessions();
    // Every component is configured exactly once: no second session for a component already done.
    const perHost = new Map<string, number>();
    for (const s of sessions) for (const h of s.hosts) perHost.set(h, (perHost.get(h) ?? 0) + 1);
    expect(perHost.size).toBe(N);
    await waitFor(async () => (await pod!.sessions()).every((s) => s.completed_ms !== null), {
      timeoutMs: 10_000,
      what: 'sessions complete',
    });
    await pod.assertInvariants(BATCH);
  }, 90_000);
});
