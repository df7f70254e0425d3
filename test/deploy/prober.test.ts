/** The local pod's kubelet model, driven with a fake clock: probe results in, start/probe/term/kill out. */
import {
  backoffDelayMs,
  initialState,
  step,
  type KubeletAction,
  type KubeletEvent,
  type KubeletState,
} from '../../scripts/src/prober';
import { worstCaseDetectionSeconds, type ContainerProbes, type ProbeKind } from '../../scripts/src/probe-spec';

const probes: ContainerProbes = {
  startup: {
    path: '/startupz',
    port: 8081,
    initialDelaySeconds: 0,
    periodSeconds: 5,
    timeoutSeconds: 3,
    failureThreshold: 4,
    successThreshold: 1,
  },
  liveness: {
    path: '/livez',
    port: 8081,
    initialDelaySeconds: 0,
    periodSeconds: 10,
    timeoutSeconds: 3,
    failureThreshold: 3,
    successThreshold: 1,
    terminationGracePeriodSeconds: 10,
  },
  readiness: {
    path: '/readyz',
    port: 8081,
    initialDelaySeconds: 0,
    periodSeconds: 10,
    timeoutSeconds: 3,
    failureThreshold: 3,
    successThreshold: 1,
  },
  podTerminationGracePeriodSeconds: 30,
};

/** A fake kubelet run: a clock, the state, and every action with the time it was emitted. */
class Sim {
  now = 0;
  state: KubeletState = initialState(0);
  log: Array<{ at: number; action: KubeletAction }> = [];
  /** Probe answers by kind; default success. */
  answer: Record<ProbeKind, boolean> = { startup: true, liveness: true, readiness: true };

  constructor(private readonly cfg: ContainerProbes = probes) {}

  send(ev: KubeletEvent): KubeletAction[] {
    const r = step(this.state, this.cfg, ev);
    this.state = r.state;
    for (const action of r.actions) this.log.push({ at: this.now, action });
    return r.actions;
  }

  /** Advances in 100 ms ticks, answering probes at once (well inside their timeout). Bounded by `ms`. */
  run(ms: number): void {
    const end = this.now + ms;
    while (this.now < end) {
      this.now += 100;
      for (const a of this.send({ type: 'tick', nowMs: this.now })) {
        if (a.type === 'probe') {
          this.send({
            type: 'probe',
            nowMs: this.now,
            probe: a.probe,
            generation: a.generation,
            ok: this.answer[a.probe],
          });
        }
        if (a.type === 'kill') this.send({ type: 'exited', nowMs: this.now, code: null, signal: 'SIGKILL' });
      }
    }
  }

  first(type: KubeletAction['type'], after = -1): { at: number; action: KubeletAction } | undefined {
    return this.log.find((e) => e.action.type === type && e.at > after);
  }

  count(type: KubeletAction['type'], probe?: ProbeKind): number {
    return this.log.filter(
      (e) => e.action.type === type && (!probe || (e.action.type === 'probe' && e.action.probe === probe)),
    ).length;
  }
}

describe('kubelet model (prober)', () => {
  it('starts the container at once and gates liveness and readiness behind the startup probe', () => {
    const sim = new Sim();
    sim.answer.startup = false;
    sim.run(14_000); // three failed startup probes (0.2, 5.2, 10.2 s), threshold 4 not reached
    expect(sim.count('start')).toBe(1);
    expect(sim.count('probe', 'startup')).toBe(3);
    expect(sim.count('probe', 'liveness')).toBe(0);
    expect(sim.count('probe', 'readiness')).toBe(0);
    expect(sim.state.phase).toBe('running');
    sim.answer.startup = true;
    sim.run(2_000);
    expect(sim.state.startupPassed).toBe(true);
    expect(sim.count('probe', 'liveness')).toBeGreaterThanOrEqual(1);
    expect(sim.state.ready).toBe(true);
  });

  it('kills a container whose startup probe fails failureThreshold times, with the probe grace (pod value here)', () => {
    const sim = new Sim();
    sim.answer.startup = false;
    sim.run(20_000);
    const term = sim.first('term');
    expect(term).toBeDefined();
    expect(term!.at).toBe(15_200); // started at 0.1 s; probes at 0.2, 5.2, 10.2 and the 4th at 15.2 s
    expect(term!.action).toMatchObject({ graceSeconds: 30 });
  });

  it('sends SIGTERM after f consecutive liveness failures and SIGKILL after the probe-level grace, then restarts at once', () => {
    const sim = new Sim();
    sim.run(1_000);
    expect(sim.state.startupPassed).toBe(true);
    const hangAt = sim.now;
    sim.answer.liveness = false;
    sim.run(60_000);
    const term = sim.first('term', hangAt)!;
    const kill = sim.first('kill', hangAt)!;
    expect(term.action).toMatchObject({ type: 'term', graceSeconds: 10 });
    // detection is bounded by f*p (+ the probe timeout, which this fake answers instantly)
    expect(term.at - hangAt).toBeLessThanOrEqual(worstCaseDetectionSeconds(probes.liveness!) * 1000);
    expect(term.at - hangAt).toBeGreaterThanOrEqual(
      (probes.liveness!.failureThreshold - 1) * probes.liveness!.periodSeconds * 1000,
    );
    expect(kill.at - term.at).toBe(10_000);
    const restart = sim.log.filter((e) => e.action.type === 'start')[1];
    expect(restart?.at).toBe(kill.at + 100); // first restart: no backoff
    expect(sim.state.restarts).toBe(1);
  });

  it('does not kill on failures that are not consecutive', () => {
    const sim = new Sim();
    sim.run(1_000);
    for (let i = 0; i < 6; i++) {
      sim.answer.liveness = i % 3 === 2; // fail, fail, succeed, fail, fail, succeed
      sim.run(10_000);
    }
    expect(sim.count('term')).toBe(0);
    expect(sim.state.probes.liveness.failures).toBeLessThan(3);
  });

  it('applies CrashLoopBackOff: 0 s, 10 s, 20 s, 40 s ... capped at 300 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map(backoffDelayMs)).toEqual([
      0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000,
    ]);
    const sim = new Sim();
    sim.run(200);
    const starts: number[] = [];
    for (let i = 0; i < 4; i++) {
      sim.send({ type: 'exited', nowMs: sim.now, code: 1, signal: null });
      const exitAt = sim.now;
      sim.run(60_000);
      const s = sim.log.filter((e) => e.action.type === 'start' && e.at > exitAt)[0];
      expect(s).toBeDefined();
      starts.push(s!.at - exitAt);
    }
    expect(starts).toEqual([100, 10_000, 20_000, 40_000]);
  });

  it('resets the backoff after ten minutes of clean running', () => {
    const sim = new Sim();
    sim.run(200);
    sim.send({ type: 'exited', nowMs: sim.now, code: 1, signal: null });
    sim.run(1_000);
    sim.send({ type: 'exited', nowMs: sim.now, code: 1, signal: null });
    expect(sim.state.nextStartAtMs! - sim.now).toBe(10_000);
    sim.run(11_000 + 600_000);
    const exitAt = sim.now;
    sim.send({ type: 'exited', nowMs: exitAt, code: 1, signal: null });
    expect(sim.state.nextStartAtMs).toBe(exitAt);
  });

  it('ignores probe results from a previous container instance', () => {
    const sim = new Sim();
    sim.run(200);
    const oldGen = sim.state.generation;
    sim.send({ type: 'exited', nowMs: sim.now, code: 1, signal: null });
    sim.run(200);
    expect(sim.state.generation).toBe(oldGen + 1);
    for (let i = 0; i < 5; i++)
      sim.send({ type: 'probe', nowMs: sim.now, probe: 'startup', generation: oldGen, ok: false });
    expect(sim.state.probes.startup.failures).toBe(0);
    expect(sim.state.phase).toBe('running');
  });

  it('stop: SIGTERM with the pod grace, no restart after the exit', () => {
    const sim = new Sim();
    sim.run(1_000);
    const acts = sim.send({ type: 'stop', nowMs: sim.now });
    expect(acts).toEqual([expect.objectContaining({ type: 'term', graceSeconds: 30 })]);
    sim.send({ type: 'exited', nowMs: sim.now + 50, code: 0, signal: null });
    sim.run(30_000);
    expect(sim.state.phase).toBe('stopped');
    expect(sim.count('start')).toBe(1);
  });

  it('without a startup probe, liveness runs from the start', () => {
    const sim = new Sim({ liveness: probes.liveness, podTerminationGracePeriodSeconds: 30 });
    sim.run(500);
    expect(sim.count('probe', 'liveness')).toBe(1);
  });

  it('never mutates the state it is given', () => {
    const s0 = initialState(0);
    const frozen = JSON.stringify(s0);
    step(s0, probes, { type: 'tick', nowMs: 1000 });
    expect(JSON.stringify(s0)).toBe(frozen);
  });
});
