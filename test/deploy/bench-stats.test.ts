/** The benchmark's pure helpers: medians and ranges, CPU ticks from /proc/<pid>/stat, its command line. */
import { parseBenchArgs } from '../../scripts/src/bench';
import { median, procStatCpuTicks, range } from '../../scripts/src/bench-stats';
import { gcDelta, parseScrape } from '../../scripts/src/bench-explain-metrics';

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

  it("runs the batcher inside the manifest's limits unless --no-limits says otherwise", () => {
    expect(parseBenchArgs([]).limits).toBe(true);
    expect(parseBenchArgs(['--no-limits']).limits).toBe(false);
    expect(() => parseBenchArgs(['--explain-cpu-limit', '0.5'])).toThrow(/explain-cpu-limit/);
  });

  it("reads the batcher's event-loop delay and GC pauses from its /metrics, and the pauses between two scrapes", () => {
    const scrape = (majors: number, over10: number, sum: number, max: number) =>
      parseScrape(
        [
          '# TYPE nodejs_eventloop_lag_max_seconds gauge',
          `nodejs_eventloop_lag_max_seconds ${max}`,
          'nodejs_eventloop_lag_p99_seconds 0.0312',
          `nodejs_gc_duration_seconds_bucket{le="0.001",kind="major"} 0`,
          `nodejs_gc_duration_seconds_bucket{le="0.01",kind="major"} ${majors - over10}`,
          `nodejs_gc_duration_seconds_bucket{le="+Inf",kind="major"} ${majors}`,
          `nodejs_gc_duration_seconds_sum{kind="major"} ${sum}`,
          `nodejs_gc_duration_seconds_count{kind="major"} ${majors}`,
          'nodejs_gc_duration_seconds_sum{kind="minor"} 0.5',
          'nodejs_gc_duration_seconds_count{kind="minor"} 40',
        ].join('\n'),
      );
    const before = scrape(10, 2, 0.1, 0.02);
    const after = scrape(25, 9, 0.4, 0.1375);
    expect(after.loopMaxMs).toBeCloseTo(137.5);
    expect(after.loopP99Ms).toBeCloseTo(31.2);
    expect(gcDelta(before, after)).toEqual({
      major: { count: 15, totalMs: expect.closeTo(300, 6) as number, over10ms: 7 },
      minor: { count: 0, totalMs: 0, over10ms: 0 },
    });
    expect(gcDelta(parseScrape(''), parseScrape(''))).toBeNull();
  });
});
