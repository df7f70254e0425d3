/**
 * The heartbeat volume misbehaves. A file deleted, truncated, filled with garbage or oversized for less
 * than the freshness limit must not restart a healthy batcher (it rewrites the file; the sidecar says what it
 * saw). A volume the batcher cannot write (not writable, disk full) must give a clear log line in the batcher and
 * the verdict heartbeat_stale, which restarts it: a batcher that cannot prove it is alive is not trusted.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { HEARTBEAT_MAX_BYTES, readHeartbeat } from '@cfs-batcher/shared';
import { closePodsAfter, FAST_LIVENESS, FAST_SIDECAR_ENV, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { report, waitFor } from '../helpers/wait';

const BATCH = 4;
const T = Number(FAST_SIDECAR_ENV.SIDECAR_FRESHNESS_SECONDS) + 1;
const BOUND =
  T +
  FAST_LIVENESS.failureThreshold * FAST_LIVENESS.periodSeconds +
  FAST_LIVENESS.timeoutSeconds +
  (FAST_LIVENESS.terminationGracePeriodSeconds ?? 3);
const SLACK = 10;

/** Keeps `content` in the file for `ms` (rewritten every 50 ms, as the batcher keeps replacing it): the fault's own
 * duration, not a wait. Bounded. */
async function holdContent(file: string, content: Buffer | null, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (let i = 0; i < 1000 && Date.now() < end; i++) {
    if (content === null) rmSync(file, { force: true });
    else writeFileSync(file, content);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('heartbeat volume faults', () => {
  let pod: Pod;
  beforeAll(async () => {
    pod = new Pod({ name: 'hbvol', scenario: smallScenario(6, { batchSize: BATCH }) });
    await pod.start();
    await pod.waitBatcherStarted();
    await waitAllConfigured(pod, 40_000);
  }, 60_000);
  closePodsAfter('all');

  it.each<[string, () => Buffer | null, RegExp]>([
    ['deleted', () => null, /missing|no heartbeat file/],
    ['truncated', () => readFileSync(pod.heartbeatPath).subarray(0, 40), /not JSON|not_json/],
    // Distinct reasons back to back: the sidecar logs a reason when it changes, not at every read.
    ['oversized', () => Buffer.alloc(HEARTBEAT_MAX_BYTES + 10, 0x7b), /oversized|limit/],
    ['garbage', () => Buffer.from('\u0000\u0001 not a heartbeat at all'), /not JSON|not_json/],
  ])(
    'heartbeat %s for 2 s: no restart, the sidecar says what it saw',
    async (_label, content, said) => {
      // Start from a sidecar that has read a good file since the previous case (silence adds up across cases).
      await waitFor(
        async () => {
          const l = await pod.livez();
          return l.status === 200 && !/current read failed/.test(l.message ?? '');
        },
        { timeoutMs: 15_000, what: 'a clean verdict' },
      );
      const since = Date.now();
      const before = pod.batcherRestarts;
      const bad = content();
      await holdContent(pod.heartbeatPath, bad, 2000);
      // The batcher's next write puts a valid file back, and liveness never failed meanwhile.
      await waitFor(async () => (await readHeartbeat(pod.heartbeatPath)).ok, {
        timeoutMs: 10_000,
        what: 'a valid heartbeat file again',
      });
      const after = await pod.livez();
      expect(`${after.status} ${after.reason}`).toBe('200 ok');
      const sidecarSaid = pod
        .logLines(pod.sidecarLogFile)
        .filter((l) => l.json && Date.parse(String(l.json.timestamp)) >= since && said.test(l.text));
      report(
        `heartbeat ${_label} for 2 s: ${pod.batcherRestarts - before} restarts; sidecar: ${sidecarSaid[0]?.text ?? '(nothing logged)'}`,
      );
      expect(pod.batcherRestarts).toBe(before);
      // A missing file is normal between an instance's start and its first write, so the sidecar logs it only when
      // it lasts (the verdict); the other three are always worth a line.
      if (_label !== 'deleted') expect(sidecarSaid.length).toBeGreaterThanOrEqual(1);
    },
    30_000,
  );

  it.each<[string, 'heartbeat-eacces' | 'heartbeat-enospc', RegExp]>([
    ['not writable', 'heartbeat-eacces', /EACCES/],
    ['disk full', 'heartbeat-enospc', /ENOSPC/],
  ])(
    'volume %s: clear batcher log line, verdict heartbeat_stale, restarted, healthy once fixed',
    async (label, fault, errno) => {
      await waitFor(async () => (await readHeartbeat(pod.heartbeatPath)).ok && (await pod.livez()).status === 200, {
        timeoutMs: 60_000,
        what: 'a healthy batcher to start from',
      });
      // Liveness is probed only once the startup probe passed (as kubelet does); after the previous case's restart
      // the new instance may not be there yet, and a volume fault before it would fail startup instead, later.
      await pod.waitBatcherStarted(60_000);
      const pid = pod.batcherPid();
      const before = pod.batcherRestarts;
      const t0 = Date.now();
      // The fixture's write hook fails the heartbeat writer's own writes (no race with it for the temp file name,
      // and the same as root, where chmod stops nothing); it lasts while the fault file names it.
      pod.injectFault(fault);
      try {
        await waitFor(() => pod.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0], {
          timeoutMs: (BOUND + SLACK) * 1000,
          what: 'liveness to fail',
        });
      } finally {
        pod.clearFault();
      }
      const term = pod.eventsFor('cfs-batcher', /sending SIGTERM/, t0)[0]!;
      const writeErr = pod
        .logLines()
        .find((l) => l.json && Date.parse(String(l.json.timestamp)) >= t0 && /Unable to write heartbeat/.test(l.text));
      report(
        `volume ${label}: restart ordered after ${((term.at - t0) / 1000).toFixed(1)} s (bound ${BOUND} s); batcher said: ${writeErr?.text ?? '(nothing)'}`,
      );
      // Order of events, not a clock: the batcher said why it could not write before the kubelet acted on the verdict.
      expect(writeErr?.text).toMatch(errno);
      expect(Date.parse(String(writeErr?.json?.timestamp))).toBeLessThanOrEqual(term.at);
      expect(term.message).toMatch(/heartbeat_stale|heartbeat_not_advancing/);
      await waitFor(() => pod.batcherRestarts > before, { timeoutMs: 20_000, what: 'the restart' });
      await pod.waitNewInstanceCycling(pid, 60_000);
      await pod.assertInvariants(BATCH);
    },
    90_000,
  );
});
