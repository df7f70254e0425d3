/** The benchmark's pure helpers: medians and ranges, CPU ticks from /proc/<pid>/stat, its command line. */
import { parseBenchArgs } from '../../scripts/src/bench';
import { median, procStatCpuTicks, range } from '../../scripts/src/bench-stats';

describe('bench helpers', () => {
  it('reads utime + stime after the command name, whatever the name holds', () => {
    const tail = 'S 1 1 1 0 -1 4194304 100 0 0 0 1234 567 0 0 20 0 11 0 4000 1000000 20000';
    expect(procStatCpuTicks(`4242 (node) ${tail}`)).toBe(1234 + 567);
    expect(procStatCpuTicks(`4242 (a) b (c)) ${tail}`)).toBe(1234 + 567);
    expect(procStatCpuTicks('garbage')).toBeNull();
  });

  it('gives medians and min-max ranges, skipping runs without a figure', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(range([1.25, NaN, 3.5], 1)).toBe('1.3-3.5');
    expect(range([NaN])).toBe('n/a');
  });

  it('parses the cycle options: sizes to 100k by default, transport, node options, no rebuild', () => {
    expect(parseBenchArgs([]).sizes).toEqual([1000, 10_000, 50_000, 100_000]);
    const a = parseBenchArgs([
      '--only',
      'cycle',
      '--transport',
      'python',
      '--node-options=--max-semi-space-size=2',
      '--no-rebuild',
    ]);
    expect(a).toMatchObject({ transport: 'python', nodeOptions: '--max-semi-space-size=2', rebuild: false });
    expect(() => parseBenchArgs(['--transport', 'udp'])).toThrow(/nodelay or python/);
  });
});
