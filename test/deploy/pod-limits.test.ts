/**
 * The bench's container limits: the kernel's key-value files read as numbers (cpu.stat, memory.events, v1's
 * memory.oom_control), and limits refused before any cgroup is made.
 */
import { keyValues, PodLimits } from '../../scripts/src/pod-limits';
import { quantity } from '../../scripts/src/quantity';

describe('pod limits', () => {
  it('reads the OOM kills and throttling counters whichever file holds them', () => {
    expect(keyValues('low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n').oom_kill).toBe(2);
    expect(keyValues('oom_kill_disable 0\nunder_oom 0\noom_kill 1\n')).toEqual({
      oom_kill_disable: 0,
      under_oom: 0,
      oom_kill: 1,
    });
    expect(keyValues('nr_periods 10\nnr_throttled 4\nthrottled_time 5000000\n')).toMatchObject({
      nr_periods: 10,
      nr_throttled: 4,
    });
    expect(keyValues('')).toEqual({});
  });

  it('refuses a limit no container could have, before touching the cgroup hierarchy', () => {
    expect(() => PodLimits.create({ cpus: 0 })).toThrow(/CPU limit must be in/);
    expect(() => PodLimits.create({ cpus: 100 })).toThrow(/CPU limit must be in/);
    expect(() => PodLimits.create({ memoryBytes: 1000 })).toThrow(/memory limit must be at least 1 MiB/);
  });

  it('reads the manifest quantities the limits come from', () => {
    expect(quantity('500m')).toBe(0.5);
    expect(quantity('250Mi')).toBe(250 * 2 ** 20);
    expect(() => quantity('250MB')).toThrow(/unsupported quantity/);
  });
});
