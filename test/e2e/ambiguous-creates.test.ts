/**
 * The ambiguous-create soak scaled down (the full one is `npm run bench -- --only soak`): 60 ambiguous creates over 600
 * components (lost answers after commit, 404s, 502s, odd 201 bodies, late commits 7 s after the client saw a reset,
 * late commits held in flight while the batcher is SIGKILLed and restarted 0.5 s later) plus spurious 404 lookups,
 * against a slow operator, with the sidecar judging. Real processes on 127.0.0.1; the simulator's history decides.
 */
import { runSoak } from '../../scripts/src/bench-soak';
import { report } from '../helpers/wait';

describe('e2e: ambiguous creates at random, crashes in flight', () => {
  it('no component in two sessions, none lost, no pending-timeout deletion, /livez never fails', async () => {
    const r = await runSoak({
      components: 600,
      ambiguous: 60,
      batchSize: 5,
      maxStartsPerSecond: 20,
      timeoutMs: 100_000,
      sidecar: true,
      killProbability: 0.3,
      log: () => undefined,
    });
    report(`soak 600/60: ${JSON.stringify(r)}`);
    expect(r.ambiguousInjected).toBeGreaterThanOrEqual(30);
    expect(r.overlaps).toBe(0);
    expect(r.notConfigured).toBe(0);
    expect(r.finished).toBe(true);
    expect(r.pendingTimeoutDeletions).toBe(0);
    expect(r.livezFailures).toBe(0);
  }, 150_000);
});
