/**
 * Against the simulator: components of the incomplete sessions found at a rebuild are busy, never batched twice after
 * a restart (a defect of the original batcher).
 */
import type { Simulator } from '@cfs-batcher/cfs-sim';
import {
  harnessLifecycle,
  fastOptions,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

function runningSession(
  name: string,
  limit: string,
  configLimit = '0',
  status = 'running',
): Parameters<Simulator['state']['putSession']>[0] {
  return {
    name,
    configuration: { name: 'cfg', limit: configLimit },
    ansible: { config: 'cfs-default-ansible-cfg', limit, verbosity: 0, passthrough: '' },
    target: { definition: 'dynamic', groups: [], image_map: [] },
    status: {
      artifacts: [],
      session: { start_time: '2024-01-01T00:00:00', status: status as 'running', succeeded: 'none' },
    },
    tags: {},
    debug_on_failure: false,
  };
}

describe('rebuilt components are busy: never in two active sessions after a restart', () => {
  it('adopts incomplete batcher- sessions and does not batch their members again', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 2);
        fastOptions(sim);
        putComponents(sim, ['x1', 'x2', 'x3']);
        // x1 finished layer 0 since: its key (limit "1", status applied) differs from the session's
        const x1 = sim.state.components.get('x1')!;
        x1.state = [
          {
            clone_url: 'https://vcs/l0.git',
            playbook: 'site.yml',
            commit: 'a'.repeat(40),
            status: 'applied',
            session_name: 'batcher-old',
            last_updated: '2024-01-01T00:00:00Z',
          },
        ];
        sim.state.putSession(runningSession('batcher-old', 'x1,x2', '0,1'));
        sim.state.putSession(runningSession('my-batcher-foreign', 'x3'));
        sim.state.putSession(runningSession('batcher-empty', ''));
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    expect(logs.has('Rebuilt previous state.  Found 1 incomplete sessions/batches.', 'INFO')).toBe(true);
    expect(logs.has(/Ignoring incomplete session batcher-empty/, 'WARNING')).toBe(true);
    const created = sessions(h.sim).filter(
      (s) => !['batcher-old', 'my-batcher-foreign', 'batcher-empty'].includes(s.name),
    );
    expect(created.map((s) => s.ansible.limit)).toEqual(['x3']);
    // the adopted session ends: its members are released and scheduled again
    const old = h.sim.state.sessions.get('batcher-old')!;
    old.status.session.status = 'complete';
    old.status.session.succeeded = 'false';
    await h.batcher.runCycle();
    h.clock.advance(1);
    await h.batcher.runCycle();
    const limits = sessions(h.sim).map((s) => s.ansible.limit.split(',').sort().join(','));
    expect(limits.filter((l) => l.includes('x1'))).toHaveLength(2);
    expect(h.sim.history.overlappingSessions()).toEqual([]);
  });
});
