/**
 * A loop that keeps cycling but never creates a session, with the options CSM runs (batcher_check_interval 10,
 * batch_window 60), the sidecar's shipped settings (deadline 60 + 6 x 10 = 120 s, CFS poll 10 s) and the shipped
 * probes. While the stall runs, the first wave's sessions complete, the batcher lists lean (most pending components
 * are busy at the switch), a batcher- session it did not create is seen for about one poll (the batcher stands down
 * for it, a wait the clock does not count), and one CFS list fails
 * once. /livez must fail on no_progress within the deadline + one poll + one evaluation of the last allowed
 * restart of the clock (plus what the sidecar reports it excused as CFS trouble), and every restart must be one
 * the rule allows.
 */
import { CLOCK_RESET_REASONS } from '@cfs-batcher/sidecar-health';
import { closePodsAfter, FAST_SIDECAR_ENV, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { getJson, sendJson, request } from '../helpers/http';
import { report, waitFor } from '../helpers/wait';

/** The sidecar as shipped (manifests/base), only the grace of the suite kept. */
const SHIPPED_SIDECAR: Record<string, string> = {
  SIDECAR_STARTUP_GRACE_SECONDS: FAST_SIDECAR_ENV.SIDECAR_STARTUP_GRACE_SECONDS!,
  SIDECAR_PHASE_BUDGETS: '',
  SIDECAR_PROGRESS_DEADLINE_SECONDS: '0',
  SIDECAR_CFS_POLL_SECONDS: '10',
};
const DEADLINE_S = 120;
const POLL_S = 10;
const EVAL_S = 1;
/** The kubelet model probes every 2 s: the first failed probe comes at most one period after the verdict. */
const PROBE_PERIOD_S = 2;

interface Progress {
  clock: string;
  stall_seconds: number | null;
  excused_seconds: number | null;
  last_reset_reason: string | null;
  last_reset_seconds_ago: number | null;
  running_for_seconds: number | null;
}

describe('e2e: never-send with the CSM defaults', () => {
  let pod: Pod | undefined;
  closePodsAfter('each');

  it('fails /livez on no_progress within deadline + poll + evaluation of the last allowed restart', async () => {
    pod = new Pod({
      name: 'stall-csm',
      scenario: smallScenario(40, {
        batchSize: 10,
        checkInterval: 10,
        batchWindow: 60,
        pendingMs: 2000,
        runningMs: 30_000,
      }),
      sidecarEnv: SHIPPED_SIDECAR,
    });
    await pod.start();
    await pod.waitBatcherStarted();
    type Status = { progress: Progress; heartbeat: { counters: Record<string, number> } };
    const status = (): Promise<Status> => getJson<Status>(`${pod!.healthUrl}/status`);
    // the first wave: full batches go at once; switch the send step off while their sessions still run
    await waitFor(
      async () => {
        const c = (await status()).heartbeat.counters;
        return c !== undefined && (c.sessions_created_total ?? 0) >= 4 && (c.batches_active ?? 0) >= 4;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the first wave of sessions running' },
    );
    pod.injectFault('never-send');
    const t0 = Date.now();
    // ten schedulable components that were never configured
    for (let i = 0; i < 10; i++)
      await sendJson('PUT', `${pod.simOrigin}/v3/components/x3001c0s${i}b0n0`, {
        id: `x3001c0s${i}b0n0`,
        desired_config: `cfg-${i % 2}`,
        enabled: true,
      });

    const resets: { reason: string; atMs: number }[] = [];
    let runStartMs = t0;
    let excusedS = 0;
    let preexisting: 'todo' | 'created' | 'done' = 'todo';
    let faulted = false;
    const failed = await waitFor(
      async () => {
        const fail = pod!.eventsFor('cfs-batcher', /^liveness probe failed/, t0)[0];
        if (fail) return fail;
        const p = (await status()).progress;
        const now = Date.now();
        if (p.last_reset_reason !== null && p.last_reset_seconds_ago !== null) {
          const atMs = now - p.last_reset_seconds_ago * 1000;
          const last = resets[resets.length - 1];
          if (atMs >= t0 && (!last || Math.abs(last.atMs - atMs) > 1500))
            resets.push({ reason: p.last_reset_reason, atMs });
        }
        if (p.running_for_seconds !== null) runStartMs = now - p.running_for_seconds * 1000;
        excusedS = p.excused_seconds ?? 0;
        const running = p.clock !== 'stopped' && (p.stall_seconds ?? 0) > 20;
        // once the wave is done and the clock runs: a batcher- session the batcher did not create, for one poll
        if (running && preexisting === 'todo') {
          await sendJson('POST', `${pod!.simOrigin}/v3/sessions`, {
            // a session as a batcher builds it (the member's configuration and tags), for a configured component
            name: 'batcher-preexisting-0',
            configuration_name: 'cfg-0',
            ansible_limit: 'x3000c0s38b0n0',
            tags: { role: 'compute' },
          });
          preexisting = 'created';
        } else if (preexisting === 'created' && p.clock === 'stopped') {
          await request(`${pod!.simOrigin}/v3/sessions/batcher-preexisting-0`, { method: 'DELETE' });
          preexisting = 'done';
        } else if (running && preexisting === 'done' && !faulted) {
          await pod!.addFault({
            match: 'GET /v3/components',
            action: { type: 'status', status: 503 },
            scope: { times: 1 },
          });
          faulted = true;
        }
        return undefined;
      },
      { timeoutMs: 420_000, intervalMs: 1000, what: 'liveness to fail on no_progress' },
    );
    const term = await waitFor(() => pod!.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0], {
      timeoutMs: 30_000,
      what: 'the kubelet model to restart the batcher',
    });
    const sinceRun = (failed.at - runStartMs) / 1000;
    const bound = DEADLINE_S + POLL_S + EVAL_S + excusedS + PROBE_PERIOD_S;
    report(
      `never-send (CSM options): /livez failed ${((failed.at - t0) / 1000).toFixed(1)} s after send-off, ${sinceRun.toFixed(1)} s after the clock's last start (bound ${bound.toFixed(1)} s, ${excusedS} s excused); SIGTERM at ${((term.at - t0) / 1000).toFixed(1)} s; restarts of the clock: ${resets.map((r) => `${r.reason}@${((r.atMs - t0) / 1000).toFixed(0)}s`).join(', ') || 'none'}`,
    );
    expect(preexisting).toBe('done');
    expect(faulted).toBe(true);
    expect(failed.message).toMatch(/no_progress/);
    expect(term.message).toMatch(/no_progress/);
    for (const r of resets) expect(CLOCK_RESET_REASONS).toContain(r.reason);
    // after the switch nothing is created: only an active session, or the batcher standing down for the batcher-
    // session it did not create (another batcher's work, which a restart cannot change), may have given the clock a
    // new start
    expect(resets.map((r) => r.reason).filter((r) => r !== 'session_active' && r !== 'standing_down')).toEqual([]);
    expect(sinceRun).toBeLessThanOrEqual(bound);
    // the failed list is the only CFS trouble of the run: it may pause the clock for a poll or two, no more
    expect(excusedS).toBeLessThan(POLL_S * 2);

    pod.clearFault();
    await waitAllConfigured(pod, 240_000);
    await pod.assertInvariants(10);
  }, 900_000);
});
