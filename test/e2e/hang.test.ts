/**
 * A hung batcher (SIGSTOP), a blocked event loop, and a CFS socket that never answers. Liveness must fail
 * and the kubelet model must restart the batcher within the bound of the formula, with the manifest's probes:
 *   in any phase: T + e + f*p + t + g, T = SIDECAR_FRESHNESS_SECONDS (the batcher beats every second)
 *   inside a phase (a call that never returns): phase budget + f*p + t + g
 */
import { readHeartbeat } from '@cfs-batcher/shared';
import { EVAL_INTERVAL_MS } from '@cfs-batcher/sidecar-health';
import {
  closePodsAfter,
  FAST_BATCHER_ENV,
  FAST_LIVENESS,
  FAST_SIDECAR_ENV,
  Pod,
  smallScenario,
  waitAllConfigured,
} from '../helpers/pod';
import { holdsFor, report, waitFor } from '../helpers/wait';

const CHECK_INTERVAL = 1;
const T = Number(FAST_SIDECAR_ENV.SIDECAR_FRESHNESS_SECONDS) + EVAL_INTERVAL_MS / 1000;
const L = FAST_LIVENESS;
const PROBE = L.failureThreshold * L.periodSeconds + L.timeoutSeconds;
const GRACE = L.terminationGracePeriodSeconds ?? 3;
/** Slack for a loaded 2-core CI machine: evaluation interval, tick granularity, process start. */
const SLACK = 10;
const BATCH = 4;
/** A CFS that holds every request 10 minutes (the simulator's own latency fault). */
const SILENT = { match: '* *', action: { type: 'latency', ms: 600_000 } };

async function expectRestarted(
  pod: Pod,
  t0: number,
  boundS: number,
  label: string,
  beforeRecovery: () => void | Promise<void> = () => undefined,
): Promise<void> {
  const before = pod.batcherRestarts;
  const oldPid = pod.batcherPid();
  await waitFor(() => pod.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0], {
    timeoutMs: (boundS + SLACK) * 1000,
    what: `${label}: liveness to fail`,
  });
  const term = pod.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0]!;
  await waitFor(() => pod.batcherRestarts > before, { timeoutMs: 30_000, what: `${label}: restart` });
  const exit = pod.eventsFor('cfs-batcher', /exited/, t0)[0]!;
  const detect = (term.at - t0) / 1000;
  const first = pod.eventsFor('cfs-batcher', /liveness probe failed \(1\//, t0)[0];
  if (first)
    report(
      `${label}: first failed liveness probe ${((first.at - t0) / 1000).toFixed(1)} s after the fault: ${first.message.slice(0, 200)}`,
    );
  const restart = (exit.at - t0) / 1000;
  report(
    `${label}: liveness failed after ${detect.toFixed(1)} s, process gone after ${restart.toFixed(1)} s (bound ${boundS} s) -- ${term.message}`,
  );
  // Order of events, not a clock (the bound is the wait's deadline above; `npm run bench` measures the time):
  // the fault, then a failed probe, then the kubelet's SIGTERM, then the exit.
  expect(first?.at ?? -1).toBeGreaterThanOrEqual(t0);
  expect(term.at).toBeGreaterThanOrEqual(first?.at ?? Infinity);
  expect(exit.at).toBeGreaterThanOrEqual(term.at);
  await beforeRecovery();
  await pod.waitNewInstanceCycling(oldPid, 60_000);
  report(`${label}: new instance completed a cycle ${((Date.now() - t0) / 1000).toFixed(1)} s after the fault`);
}

describe('hung batcher', () => {
  let pod: Pod | undefined;
  closePodsAfter('each');

  it('SIGSTOP, then a blocked event loop: each is detected and restarted within T + f*p + t + g', async () => {
    pod = new Pod({ name: 'hang', scenario: smallScenario(8, { batchSize: BATCH, runningMs: 400 }) });
    await pod.start();
    await pod.waitBatcherStarted();
    await waitAllConfigured(pod, 40_000);
    const bound = T + PROBE + GRACE;

    let t0 = Date.now();
    process.kill(pod.batcherPid(), 'SIGSTOP');
    await expectRestarted(pod, t0, bound, 'hang (SIGSTOP)');
    expect(pod.eventsFor('cfs-batcher', /SIGKILL/, t0).length).toBeGreaterThanOrEqual(1); // a stopped process ignores SIGTERM

    t0 = Date.now();
    pod.injectFault('busy-loop');
    await expectRestarted(pod, t0, bound + CHECK_INTERVAL, 'busy event loop');
    const reasons = pod.eventsFor('cfs-batcher', /liveness probe failed/, 0).map((e) => e.message);
    expect(reasons.some((m) => /heartbeat_(stale|not_advancing)|phase_stuck/.test(m))).toBe(true);
    await pod.assertInvariants(BATCH);
  }, 150_000);

  it('a CFS socket that never answers: with the client timeouts the batcher waits (no restart); without them it is phase_stuck and restarted', async () => {
    // The original had no HTTP timeout before 1.11.0: simulate that with a request timeout far beyond the test.
    pod = new Pod({
      name: 'silent-cfs',
      scenario: smallScenario(6, { batchSize: BATCH }),
      batcherEnv: { ...FAST_BATCHER_ENV },
    });
    await pod.start();
    await pod.waitBatcherStarted();
    await waitAllConfigured(pod, 40_000);

    // 1. Timeouts on (2 s per call, 2 s retry budget): the batcher reports waiting_for_cfs and is left alone.
    await pod.addFault(SILENT);
    const t0 = Date.now();
    await waitFor(async () => (await pod!.livez()).status === 200 && /waiting_for_cfs/.test(await readPhase(pod!)), {
      timeoutMs: 20_000,
      what: 'waiting_for_cfs',
    });
    const waitS = (Date.now() - t0) / 1000;
    // Must not happen: a liveness failure. Watched for as long as a batcher that stopped stamping would need to
    // fail it (freshness limit T, then f x p), from the moment it reported waiting_for_cfs.
    const quietMs = (T + L.failureThreshold * L.periodSeconds) * 1000;
    const tq = Date.now();
    const quiet = await holdsFor(
      () => pod!.eventsFor('cfs-batcher', /liveness probe failed|sending SIGTERM/, tq).length === 0,
      quietMs,
    );
    expect(quiet).toBe(true);
    expect(pod.batcherRestarts).toBe(0);
    report(
      `silent CFS with client timeouts: waiting_for_cfs after ${waitS.toFixed(1)} s, no liveness failure in ${quietMs / 1000} s`,
    );
    await pod.clearFaults();
    await pod.close();

    // 2. Timeouts off: the call never returns and no CFS answer stamps the heartbeat: it goes stale (or, were it
    //    stamped, the phase budget would catch it).
    pod = new Pod({
      name: 'silent-cfs-notimeout',
      scenario: smallScenario(6, { batchSize: BATCH }),
      batcherEnv: { CFS_REQUEST_TIMEOUT_MS: '600000', CFS_RETRY_BUDGET_MS: '0' },
    });
    await pod.start();
    await pod.waitBatcherStarted();
    await pod.addFault(SILENT);
    const t1 = Date.now();
    const phaseBudget = 10; // FAST_SIDECAR_ENV.SIDECAR_PHASE_BUDGETS
    await expectRestarted(
      pod,
      t1,
      CHECK_INTERVAL + phaseBudget + PROBE + GRACE,
      'never-answering CFS, no client timeout',
      () => pod!.clearFaults(), // CFS answers again, so the new instance can work
    );
    expect(pod.eventsFor('cfs-batcher', /heartbeat_stale|phase_stuck/, t1).length).toBeGreaterThanOrEqual(1);
    await waitAllConfigured(pod, 40_000);
    await pod.assertInvariants(BATCH);
  }, 150_000);
});

async function readPhase(pod: Pod): Promise<string> {
  const r = await readHeartbeat(pod.heartbeatPath);
  return r.ok ? r.heartbeat.phase : '';
}
