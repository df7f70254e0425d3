/**
 * A session's end handled as the original batcher did: what is written to each component for each outcome, and a
 * session deleted or stuck in pending released. Against the simulator with the real client and a fake clock.
 */
import type { Simulator } from '@cfs-batcher/cfs-sim';
import {
  harnessLifecycle,
  count,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  fastOptions,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

describe('completion handling', () => {
  async function oneSession(seed: (sim: Simulator) => void) {
    h = await startHarness({
      seed: (sim) => {
        fastOptions(sim);
        seed(sim);
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    return sessions(h.sim)[0]!;
  }

  it('complete: layers Ansible did not run are PATCHed skipped', async () => {
    const s = await oneSession((sim) => {
      putConfig(sim, 'cfg', 2);
      putComponents(sim, ['x1', 'x2']);
      sim.operator.setComponentOutcome('x2', 'skip');
    });
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    const x2 = h.sim.state.components.get('x2')!;
    expect(x2.state!.map((l) => [l.status, l.session_name])).toEqual([
      ['skipped', s.name],
      ['skipped', s.name],
    ]);
    expect(h.sim.state.components.get('x1')!.state!.every((l) => l.status === 'applied')).toBe(true);
    expect(logs.has('1 batches/sessions have completed', 'INFO')).toBe(true);
    expect(h.batcher.state.book.size).toBe(0);
  });

  it('failed with no Ansible-recorded failure: error_count+1 and failed on the first pending layer', async () => {
    const s = await oneSession((sim) => {
      putConfig(sim, 'cfg', 2);
      putComponents(sim, ['x1'], { error_count: 1 });
      sim.operator.addSessionMode({ mode: 'clone_failure' });
    });
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    const x1 = h.sim.state.components.get('x1')!;
    expect(x1.error_count).toBe(2);
    expect(x1.state!.map((l) => [l.clone_url, l.status, l.session_name])).toEqual([
      ['https://vcs/l0.git', 'failed', s.name],
    ]);
  });

  it('succeeded=unknown (job vanished) counts as failed', async () => {
    await oneSession((sim) => {
      putConfig(sim, 'cfg', 1);
      putComponents(sim, ['x1']);
      sim.operator.addSessionMode({ mode: 'job_vanishes' });
    });
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    expect(h.sim.state.components.get('x1')!.error_count).toBe(1);
  });

  it('failed with an Ansible-recorded failure: nothing extra is written', async () => {
    await oneSession((sim) => {
      putConfig(sim, 'cfg', 1);
      putComponents(sim, ['x1', 'x2']);
      sim.operator.setComponentOutcome('x1', 'fail');
      sim.operator.setComponentOutcome('x2', 'skip');
    });
    h.sim.operator.runToCompletion();
    const patchesBefore = count(h.sim, 'PATCH /v3/components/{component_id}');
    await h.batcher.runCycle();
    expect(count(h.sim, 'PATCH /v3/components/{component_id}')).toBe(patchesBefore);
    expect(h.sim.state.components.get('x2')!.state ?? []).toEqual([]);
  });

  it('desired state changed meanwhile: the component is left alone', async () => {
    await oneSession((sim) => {
      putConfig(sim, 'cfg', 1);
      putConfig(sim, 'cfg2', 1, 'c'.repeat(40));
      putComponents(sim, ['x1']);
      sim.operator.addSessionMode({ mode: 'clone_failure' });
    });
    h.sim.state.putComponent({ ...h.sim.state.components.get('x1')!, desired_config: 'cfg2' });
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    expect(h.sim.state.components.get('x1')!.error_count).toBe(0);
    expect(h.sim.state.components.get('x1')!.state ?? []).toEqual([]);
  });

  it('deleted session (404): released and batched again', async () => {
    const s = await oneSession((sim) => {
      putConfig(sim, 'cfg', 1);
      putComponents(sim, ['x1']);
    });
    h.sim.state.deleteSession(s.name);
    await h.batcher.runCycle();
    expect(logs.has(`Session ${s.name} no longer exists`, 'INFO')).toBe(true);
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    expect(sessions(h.sim)[0]!.name).not.toBe(s.name);
  });

  it('pending longer than batcher_pending_timeout: deleted and released', async () => {
    const s = await oneSession((sim) => {
      putConfig(sim, 'cfg', 1);
      putComponents(sim, ['x1']);
      sim.operator.addSessionMode({ mode: 'stuck_pending', count: 1 });
    });
    h.clock.advance(300_000);
    await h.batcher.runCycle();
    expect(h.sim.state.sessions.has(s.name)).toBe(true);
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(logs.has(`Session ${s.name} is stuck in pending and will be deleted.`, 'WARNING')).toBe(true);
    expect(h.sim.state.sessions.has(s.name)).toBe(false);
    expect(count(h.sim, 'DELETE /v3/sessions/{session_name}')).toBe(1);
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
  });
});
