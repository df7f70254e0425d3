/**
 * The pending-sessions allowance against the operator shapes it must follow (the real batcher and sidecar against
 * the simulator, shipped settings, CSM's batcher_check_interval scaled to 1 s): a prompt operator, a rate-limited
 * one, one that stops starting sessions and resumes, and one whose start latency jumps and comes back. Assertions
 * are on counts (sessions deleted as stuck, pending sessions, creates while stopped, the allowance's level) and the
 * session invariants, never on how long anything took.
 */
import { readHeartbeat, type Heartbeat } from '@cfs-batcher/shared';
import { closePodsAfter, Pod, smallScenario, waitAllConfigured } from '../helpers/pod';
import { getJson } from '../helpers/http';
import { report, waitFor } from '../helpers/wait';

const BATCH = 5;
/** Starts 1-2 s after the create. */
const PROMPT = { pendingMs: 1000, pendingJitterMs: 1000, runningMs: 600 };

interface Summary {
  sessions: number;
  pending: number;
  pendingPeak: number;
  deletedWhilePending: number;
}

function podFor(name: string, n: number, o: { batchSize?: number; timeoutS: number; operator: object }): Pod {
  const scenario = smallScenario(n, { batchSize: o.batchSize ?? BATCH, batchWindow: 0 });
  const options = { ...(scenario.options as object), batcher_pending_timeout: o.timeoutS };
  return new Pod({ name, scenario: { ...scenario, options, operator: o.operator } });
}

const summary = (pod: Pod): Promise<Summary> => getJson<Summary>(`${pod.simOrigin}/__sim/sessions-summary`);

async function heartbeat(pod: Pod): Promise<Heartbeat | undefined> {
  const r = await readHeartbeat(pod.heartbeatPath);
  return r.ok ? r.heartbeat : undefined;
}

/** The allowance the heartbeat reports (`pacing.pending_cap`), and the cycle. */
async function pacing(pod: Pod): Promise<{ allowance: number; why: string; cycle: number } | undefined> {
  const hb = await heartbeat(pod);
  if (hb?.pacing === undefined) return undefined;
  return { allowance: hb.pacing.pending_cap, why: hb.pacing.allowance?.why ?? '', cycle: hb.cycle };
}

/** Samples the allowance until `stop()`; returns the highest seen. */
function sampleAllowance(pod: Pod) {
  let peak = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      peak = Math.max(peak, (await pacing(pod).catch(() => undefined))?.allowance ?? 0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return peak;
    },
  };
}

describe('e2e: the pending-sessions allowance follows the operator', () => {
  closePodsAfter('each');

  it('a prompt operator (1-2 s starts): the allowance grows past its start, nothing deleted, invariants hold', async () => {
    const pod = podFor('pace-prompt', 1000, { timeoutS: 300, operator: PROMPT });
    await pod.start();
    const sampler = sampleAllowance(pod);
    await waitAllConfigured(pod, 120_000);
    const peak = await sampler.stop();
    const s = await summary(pod);
    report(`prompt: ${JSON.stringify(s)}, allowance peak ${peak}`);
    expect(peak).toBeGreaterThan(40);
    expect(s.deletedWhilePending).toBe(0);
    await pod.assertInvariants(BATCH);
  }, 150_000);

  it('a slow operator (20 starts/s, 20 s pending timeout, 1000 sessions): none deleted as stuck, pending at most 200', async () => {
    // Unpaced, the 1000 sessions would all be pending at once and the last would start 50 s later: after the timeout.
    const pod = podFor('pace-slow', 1000, {
      batchSize: 1,
      timeoutS: 20,
      operator: { ...PROMPT, maxStartsPerSecond: 20 },
    });
    await pod.start();
    await waitAllConfigured(pod, 240_000);
    const s = await summary(pod);
    report(`slow: ${JSON.stringify(s)}`);
    expect(s.deletedWhilePending).toBe(0);
    // 20/s x half the timeout: fewer pending than this all start before the allowance would even be halved.
    expect(s.pendingPeak).toBeLessThanOrEqual(200);
    await pod.assertInvariants(1);
  }, 300_000);

  it('an operator that stops starting: creating stops within the allowance, and resumes when starts resume', async () => {
    const pod = podFor('pace-stop', 2000, { timeoutS: 300, operator: PROMPT });
    await pod.start();
    await waitFor(async () => ((await summary(pod)).sessions >= 60 ? true : undefined), {
      what: '60 sessions created',
      timeoutMs: 60_000,
    });
    await pod.operator({ pause: true });
    const atStop = await summary(pod);
    // Three cycles later the batcher has had every chance to create; two more show whether it still does.
    const cycles = async (n: number): Promise<void> => {
      const from = (await pacing(pod))!.cycle;
      await waitFor(async () => ((await pacing(pod))!.cycle >= from + n ? true : undefined), {
        what: `${n} cycles`,
        timeoutMs: 60_000,
      });
    };
    await cycles(3);
    const held = await summary(pod);
    await cycles(2);
    const later = await summary(pod);
    const hb = await heartbeat(pod);
    const allowance = hb!.pacing!.pending_cap;
    report(
      `stop: at the stop ${JSON.stringify(atStop)}; 3 cycles later ${JSON.stringify(held)}, 2 more ${later.sessions} sessions, allowance ${allowance}`,
    );
    expect(later.sessions).toBe(held.sessions);
    expect(later.pending).toBeLessThanOrEqual(allowance);
    expect(hb?.creating?.state).toBe('paced');
    await pod.operator({ pause: false });
    await waitAllConfigured(pod, 240_000);
    const end = await summary(pod);
    expect(end.sessions).toBeGreaterThan(later.sessions);
    expect(end.deletedWhilePending).toBe(0);
    await pod.assertInvariants(BATCH);
  }, 360_000);

  it('start latency 1 s -> 20 s -> 1 s (30 s timeout): none deleted as stuck, the allowance halves and comes back', async () => {
    const pod = podFor('pace-jump', 3000, { timeoutS: 30, operator: PROMPT });
    await pod.start();
    await waitFor(async () => ((await summary(pod)).sessions >= 60 ? true : undefined), {
      what: '60 sessions created',
      timeoutMs: 60_000,
    });
    const atJump = (await pacing(pod))!.allowance;
    await pod.operator({ pendingMs: 20_000 });
    // The sessions waiting 20 s pass half the timeout (15 s): the allowance is halved.
    await waitFor(async () => ((await pacing(pod))!.why === 'halved' ? true : undefined), {
      what: 'the allowance halved',
      timeoutMs: 90_000,
    });
    const low = (await pacing(pod))!.allowance;
    await pod.operator({ pendingMs: 1000 });
    await waitFor(async () => ((await pacing(pod))!.allowance >= atJump ? true : undefined), {
      what: `the allowance back to ${atJump}`,
      timeoutMs: 120_000,
    });
    await waitAllConfigured(pod, 240_000);
    const s = await summary(pod);
    report(`jump: allowance ${atJump} at the jump, ${low} halved; ${JSON.stringify(s)}`);
    expect(low).toBeLessThan(atJump);
    expect(s.deletedWhilePending).toBe(0);
    await pod.assertInvariants(BATCH);
  }, 420_000);
});
