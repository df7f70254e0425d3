/**
 * Batching and sending as the original batcher did it: full batches at once, the rest after batch_window, the
 * session body, and the batch key. Against the simulator with the real client and a fake clock.
 */
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';
import {
  harnessLifecycle,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  fastOptions,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

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
