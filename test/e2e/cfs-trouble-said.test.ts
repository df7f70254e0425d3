/**
 * CFS trouble is said where the on-call looks, on the local pod's programs against the simulator's faults: each
 * failed call once in the batcher's log at its first failure (503 and 404 alike: status, method and route, how long it
 * keeps trying), and how it ended; while the loop retries a failing call, /explain and the sidecar's /status name that
 * call, its last answer and since when, and /status does not show an older, different error as the last one.
 */
import { getJson, request } from '../helpers/http';
import { closePodsAfter, Pod, smallScenario } from '../helpers/pod';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/wait';

interface Status {
  heartbeat: {
    batcher_cfs: {
      last_error: { message: string } | null;
      retrying?: { method: string; route: string; answer: string; attempts: number; since: string } | null;
    } | null;
    counters: { batches_queued: number } | null;
  };
}

const NODE = 'x3000c0s0b0n0';

describe('CFS trouble in the log, explain and /status', () => {
  let pod: Pod | undefined;
  closePodsAfter('all');

  it('a 404, then 503s on every route: each said once per call, and the retrying call named', async () => {
    const metricsPort = await freePort();
    pod = new Pod({
      name: 'cfs-trouble',
      // one batch that stays queued (large size, long window): the node stays in the batcher's memory
      scenario: smallScenario(3, { batchSize: 100, batchWindow: 600, checkInterval: 1 }),
      // the shipped retry budget, so a 503 lasting seconds is retried within one call
      batcherEnv: { CFS_RETRY_BUDGET_MS: '30000', METRICS_PORT: String(metricsPort) },
    });
    await pod.start();
    await pod.waitBatcherStarted();
    const status = (): Promise<Status> => getJson<Status>(`${pod!.healthUrl}/status`);
    const deadline = { timeoutMs: 30_000, intervalMs: 200 };
    await waitFor(async () => ((await status()).heartbeat.counters?.batches_queued ?? 0) >= 1, {
      ...deadline,
      what: 'a queued batch',
    });
    const lines = () => pod!.logLines().flatMap((l) => (l.json ? [l.json] : []));
    const said = (re: RegExp) => lines().filter((j) => j.logger === 'cfs.transport' && re.test(String(j.message)));

    // A 404 on the options: the cycle ends on it; said once per call, as final.
    await pod.addFault({ match: 'GET /v3/options', action: { type: 'status', status: 404 }, scope: { times: 1 } });
    await waitFor(async () => /404/.test((await status()).heartbeat.batcher_cfs?.last_error?.message ?? ''), {
      ...deadline,
      what: 'the 404 as the last CFS error in /status',
    });
    const final404 = /^GET \/v3\/options: CFS answered 404; not retried \(an answer below 500 is final\)$/;
    await waitFor(() => said(final404).length > 0, { ...deadline, what: 'the 404 line in the log' });
    expect(said(final404)).toHaveLength(1);

    // Then 503s on every route, for longer than a retry delay: the loop's call retries.
    await pod.addFault({ match: '* /v3/*', action: { type: 'status', status: 503 }, scope: { durationMs: 8000 } });
    let seen: Status | undefined;
    await waitFor(
      async () => {
        seen = await status();
        return seen.heartbeat.batcher_cfs?.retrying?.answer === '503';
      },
      { ...deadline, what: 'the retrying call in /status' },
    );
    const cfs = seen!.heartbeat.batcher_cfs!;
    expect(cfs.retrying).toMatchObject({ method: expect.stringMatching(/^(GET|PATCH|POST)$/), answer: '503' });
    expect(cfs.retrying!.route).toMatch(/^\/v3\//);
    expect(cfs.retrying!.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(cfs.last_error?.message).toContain(': CFS answered 503');
    expect(cfs.last_error?.message).not.toContain('404');

    type Answer = { state: string; reason: string; cfs_retrying?: unknown };
    let answer: Answer | undefined;
    await waitFor(
      async () => {
        const r = await request(`http://127.0.0.1:${metricsPort}/explain/${NODE}`);
        answer = ('json' in r ? r.json : undefined) as Answer | undefined;
        return answer?.cfs_retrying !== undefined;
      },
      { ...deadline, what: 'an explain answer naming the retrying call' },
    );
    expect(answer!.state).toBe('waiting_for_batch');
    expect(answer!.reason).toMatch(
      /Meanwhile the batcher is retrying (GET|PATCH|POST) \/v3\/\S+: CFS answered 503, failing since \d\d:\d\d:\d\d UTC \(\d+ failed attempts?\); it keeps trying until \d\d:\d\d:\d\d UTC at the latest/,
    );
    expect(answer!.cfs_retrying).toMatchObject({ answer: '503' });
    // An id the batcher does not hold: its lookup fails on the same fault, and the reply says what the loop is doing.
    let unheld: { error?: string; reason?: string } | undefined;
    await waitFor(
      async () => {
        const r = await request(`http://127.0.0.1:${metricsPort}/explain/x3000c9s9b0n0`);
        unheld = ('json' in r ? r.json : undefined) as typeof unheld;
        return r.status === 503 && /Meanwhile the batcher is retrying/.test(unheld?.reason ?? '');
      },
      { ...deadline, what: 'a failed lookup naming the retrying call' },
    );
    expect(unheld!.error).toBe('cfs_unavailable');
    expect(unheld!.reason).toMatch(/^The batcher does not hold this component and its CFS lookup answered 503; try/);

    // The call that retried through the fault answers in the end, and says so; the 503s were said once per call.
    await waitFor(() => said(/: CFS answered after \d+ attempts over [\d.]+ s \(last failure: 503\)$/).length >= 1, {
      ...deadline,
      what: 'the line of a call that answered after retries',
    });
    const firsts = said(/: CFS answered 503; retrying for up to \d+ s$/);
    expect(firsts.length).toBeGreaterThanOrEqual(1);
    for (const l of firsts) expect(l.level).toBe('WARNING');
    const stats = await pod.stats();
    const served503 = Object.entries(stats.byRouteStatus)
      .filter(([k]) => k.endsWith(' 503'))
      .reduce((n, [, v]) => n + v, 0);
    expect(firsts.length).toBeLessThan(served503); // not one line per attempt
    await waitFor(async () => (await status()).heartbeat.batcher_cfs?.retrying == null, {
      ...deadline,
      what: 'no call retrying once CFS answers',
    });
    expect(pod.batcherRestarts).toBe(0); // CFS trouble restarts nothing
  });
});
