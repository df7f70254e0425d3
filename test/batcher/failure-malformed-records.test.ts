/**
 * Against the simulator: a malformed component record is skipped and counted, the others are still scheduled (the
 * original batcher stopped on it).
 */
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

describe('a malformed component record is skipped, the others are scheduled', () => {
  it('skips records missing error_count or a layer playbook', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim, 'cfg', 1);
        sim.state.putConfiguration({
          name: 'nopb',
          layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: 'a'.repeat(40) }],
        });
        fastOptions(sim);
        putComponents(sim, ['good']);
        sim.state.putComponent({ id: 'bad-ec', desired_config: 'cfg', enabled: true, state: [], tags: {} });
        putComponents(sim, ['bad-pb'], { desired_config: 'nopb' });
      },
    });
    await h.batcher.runCycle();
    h.clock.advance(1);
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('ok');
    expect(sessions(h.sim).map((s) => s.ansible.limit)).toEqual(['good']);
    expect(logs.has('Skipping component bad-ec: missing or invalid error_count', 'WARNING')).toBe(true);
    expect(logs.has('Skipping component bad-pb: desired_state[0] has no playbook', 'WARNING')).toBe(true);
    const invalid = await h.batcher.metrics.invalidRecords.get();
    expect(invalid.values.find((v) => v.labels.kind === 'component')!.value).toBeGreaterThanOrEqual(2);
  });
});
