/**
 * The CFS options as the original batcher handled them: missing defaults PATCHed once, invalid values logged and
 * the last good one kept, logging_level applied live. Against the simulator with the real client and a fake clock.
 */
import { getLogLevel, setLogLevel } from '@cfs-batcher/shared';
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';
import { harnessLifecycle, count, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

// logging_level changes the process-wide level; the next test starts from the default again.
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
