/**
 * The batcher dies (SIGKILL, uncaught exception, unhandled rejection, out of memory) while sessions are in
 * flight. It must be restarted, rebuild its state from the in-flight sessions ("Found n incomplete"), and no
 * component may end up in two active sessions.
 */
import { closePodsAfter, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { report, waitFor } from '../helpers/wait';

const N = 12;
const BATCH = 3;

type Crash = 'SIGKILL' | 'throw' | 'reject' | 'oom';

describe('batcher crash with sessions in flight', () => {
  let pod: Pod | undefined;
  closePodsAfter('each');

  // How each one ends: the exit the kubelet saw, and the line the dying process wrote (none for SIGKILL).
  it.each<[Crash, RegExp, RegExp | null]>([
    ['SIGKILL', /exited \(signal SIGKILL\)/, null],
    ['throw', /exited \(code 1\)/, /Unexpected error occurred/],
    ['reject', /exited \(code 1\)/, /Unexpected error occurred/],
    // V8 aborts on a heap it cannot grow: SIGABRT (134 when a shell reports it), after its FATAL ERROR line.
    ['oom', /exited \((signal SIGABRT|code 134)\)/, /JavaScript heap out of memory/],
  ])(
    '%s: restarted, state rebuilt from in-flight sessions, no component in two sessions',
    async (crash, how, said) => {
      pod = new Pod({
        name: `crash-${crash}`,
        // Sessions run 6 s so several are in flight when the batcher dies.
        scenario: smallScenario(N, { batchSize: BATCH, runningMs: 6000, pendingMs: 300, configs: 2 }),
        nodeArgs: crash === 'oom' ? ['--max-old-space-size=48'] : [],
      });
      await pod.start();
      await pod.waitBatcherStarted();
      await waitFor(async () => (await pod!.sessions()).filter((s) => s.completed_ms === null).length >= 2, {
        timeoutMs: 30_000,
        what: 'sessions in flight',
      });
      const inFlight = (await pod.sessions()).filter((s) => s.completed_ms === null && s.deleted_ms === null).length;
      const oldPid = pod.batcherPid();
      const t0 = Date.now();
      if (crash === 'SIGKILL') process.kill(pod.batcherPid(), 'SIGKILL');
      else pod.injectFault(crash);
      await waitFor(() => pod!.batcherRestarts >= 1, {
        timeoutMs: 30_000,
        what: 'the batcher to exit and be restarted',
      });
      const exit = pod.eventsFor('cfs-batcher', /exited/, t0)[0]!;
      await pod.waitNewInstanceCycling(oldPid, 60_000);
      const recovered = (Date.now() - t0) / 1000;
      const rebuilt = await waitFor(() => pod!.logLines().filter((l) => /Rebuilt previous state/.test(l.text))[1], {
        timeoutMs: 30_000,
        what: 'the second instance to rebuild its state',
      });
      const found = Number(/Found (\d+) incomplete/.exec(rebuilt.text)?.[1] ?? -1);
      report(
        `crash ${crash}: ${exit.message}; new instance completed a cycle ${recovered.toFixed(1)} s after the fault; rebuilt ${found} of ${inFlight} in-flight sessions`,
      );
      expect(exit.message).toMatch(how);
      // Crashes other than SIGKILL are logged before the exit (never silent).
      if (said) {
        const line = pod.logLines().find((l) => said.test(l.text));
        expect(line?.text).toMatch(said);
        if (crash !== 'oom') expect(line?.json?.level).toBe('ERROR');
      }
      expect(found).toBeGreaterThanOrEqual(1);
      await waitAllConfigured(pod, 60_000);
      await waitFor(
        async () => (await pod!.sessions()).every((s) => s.completed_ms !== null || s.deleted_ms !== null),
        { timeoutMs: 20_000, what: 'all sessions ended' },
      );
      const checked = await pod.assertInvariants(BATCH);
      report(`crash ${crash}: invariants hold over ${checked} sessions`);
    },
    120_000,
  );
});
