/** Behaviour kept from the original, each against the simulator with the real client and a fake clock. */
import { getLogLevel, setLogLevel } from '@cfs-batcher/shared';
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import {
  harnessLifecycle,
  count,
  ids,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  fastOptions,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

afterEach(() => setLogLevel('INFO'));

describe('options', () => {
  it('PATCHes the missing defaults once, not every cycle', async () => {
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    await h.batcher.runCycle();
    await h.batcher.runCycle();
    await h.batcher.runCycle();
    expect(count(h.sim, 'PATCH /v3/options')).toBe(1);
    expect(count(h.sim, 'GET /v3/options')).toBe(3);
    expect(h.sim.state.effectiveOptions()).toMatchObject(DEFAULT_OPTIONS);
    expect(logs.has('Setting option batch_size to 25.', 'INFO')).toBe(true);
    expect(logs.lines.find((l) => l.message === 'Setting option batch_size to 25.')?.logger).toBe(
      'batcher.cfs.options',
    );
  });

  it('logs an invalid value and keeps the last good one', async () => {
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    h.sim.state.options = { ...DEFAULT_OPTIONS, batch_size: 4 };
    await h.batcher.runCycle();
    expect(h.batcher.state.options.batch_size).toBe(4);
    h.sim.state.options = { ...DEFAULT_OPTIONS, batch_size: 0, batch_window: 'soon' };
    await h.batcher.runCycle();
    expect(h.batcher.state.options.batch_size).toBe(4);
    expect(h.batcher.state.options.batch_window).toBe(60);
    expect(logs.has(/Invalid value 0 for option batch_size/, 'WARNING')).toBe(true);
    expect(logs.has(/Invalid value "soon" for option batch_window/, 'WARNING')).toBe(true);
    expect(count(h.sim, 'PATCH /v3/options')).toBe(0);
  });

  it('applies logging_level live', async () => {
    h = await startHarness({ seed: (sim) => putConfig(sim) });
    h.sim.state.options = { ...DEFAULT_OPTIONS, logging_level: 'DEBUG' };
    await h.batcher.runCycle();
    expect(getLogLevel()).toBe('DEBUG');
    expect(logs.has('Changing logging level from INFO to DEBUG', 'INFO')).toBe(true);
    expect(logs.has('Checking components for new configuration states', 'DEBUG')).toBe(true);
    h.sim.state.options = { ...DEFAULT_OPTIONS, logging_level: 'WARNING' };
    await h.batcher.runCycle();
    expect(getLogLevel()).toBe('WARNING');
  });
});

describe('batching and sending', () => {
  it('sends a full batch at once and the rest after batch_window (strict >), with the session body of the original', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 2);
        sim.state.options = { ...DEFAULT_OPTIONS, batch_size: 2 };
        putComponents(sim, ['x1', 'x2'], { tags: { bos_session: 'b1', rack: 'r1' } });
        putComponents(sim, ['x3'], { tags: { rack: 'r2' } });
      },
    });
    const r1 = await h.batcher.runCycle();
    expect(r1.outcome).toBe('ok');
    expect(sessions(h.sim)).toHaveLength(1);
    const s = sessions(h.sim)[0]!;
    expect(s.name).toMatch(/^batcher-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(s.configuration).toEqual({ name: 'cfg', limit: '0,1' });
    expect(s.ansible.limit.split(',').sort()).toEqual(['x1', 'x2']);
    expect(s.target.definition).toBe('dynamic');
    expect(s.tags).toEqual({ bos_session: 'b1', rack: 'r1' });
    expect(logs.has('Successfully submitted 1 batches for configuration', 'INFO')).toBe(true);

    h.clock.advance(60_000);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1); // exactly batch_window old: not yet
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(2);
    const s2 = sessions(h.sim).find((x) => x.name !== s.name)!;
    expect(s2.ansible.limit).toBe('x3');
    expect(s2.tags).toEqual({ rack: 'r2' });
  });

  it('keys batches by configuration, pending layers and latest state status, and omits tags when none are shared', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        putConfig(sim, 'other', 1);
        fastOptions(sim);
        putComponents(sim, ['a1', 'a2']);
        putComponents(sim, ['b1'], { desired_config: 'other', tags: { t: '1' } });
        putComponents(sim, ['b2'], { desired_config: 'other', tags: { t: '2' } });
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    const byConfig = sessions(h.sim).map((s) => [
      s.configuration.name,
      s.ansible.limit.split(',').sort().join(','),
      s.tags,
    ]);
    expect(byConfig.sort()).toEqual([
      ['cfg', 'a1,a2', {}],
      ['other', 'b1,b2', {}],
    ]);
  });
});

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

describe('backoff and batcher_disable', () => {
  it('halts creation after 20 failed sessions, 60 s doubling, and one success resets it', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        fastOptions(sim, { batch_size: 1, default_batcher_retry_policy: 10 });
        putComponents(sim, ids('n', 20));
        sim.operator.addSessionMode({ mode: 'clone_failure' });
      },
    });
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(20);
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle(); // 20 failures: halt; the re-collected batches are not sent
    expect(
      logs.has(
        'The 20 most recent configuration sessions have failed. Halting session creation for 60 seconds',
        'WARNING',
      ),
    ).toBe(true);
    expect(count(h.sim, 'POST /v3/sessions')).toBe(20);
    h.clock.advance(30_000);
    await h.batcher.runCycle();
    expect(count(h.sim, 'POST /v3/sessions')).toBe(20);
    h.clock.advance(30_000);
    await h.batcher.runCycle(); // halt over: send again (all still fail)
    expect(count(h.sim, 'POST /v3/sessions')).toBe(40);
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    expect(logs.has(/Halting session creation for 120 seconds/)).toBe(true);
    expect((await h.batcher.metrics.backoffSeconds.get()).values[0]!.value).toBe(120);
    h.clock.advance(120_000);
    h.sim.operator.clearOutcomes();
    await h.batcher.runCycle();
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    expect(logs.has('A session has succeeded.  Resuming normal operations', 'INFO')).toBe(true);
    expect((await h.batcher.metrics.backoffSeconds.get()).values[0]!.value).toBe(0);
    expect(h.batcher.state.backoff.currentS).toBe(0);
  });

  it('batcher_disable: monitors and finishes sessions but creates none', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        fastOptions(sim);
        putComponents(sim, ['x1']);
        sim.operator.setComponentOutcome('x1', 'skip');
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    h.sim.state.options = { ...h.sim.state.options, batcher_disable: true };
    putComponents(h.sim, ['x2']);
    h.sim.operator.runToCompletion();
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(sessions(h.sim)).toHaveLength(1);
    expect(h.sim.state.components.get('x1')!.state![0]!.status).toBe('skipped'); // completion still handled
    // A full collect, then a lean one with x1 read again by id before its POST, and 1 ids= read at completion
    expect(count(h.sim, 'GET /v3/components')).toBe(4);
  });
});
