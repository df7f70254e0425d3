/** The table rows of the cycle, explain and floor benches, with the original batcher's figures (issue 15) beside them. */
import type { CycleRun } from './bench-cycle';
import type { ExplainRun } from './bench-explain';
import type { FloorRun } from './bench-floor';
import { fmt, median, range, type Row } from './bench-stats';

export const ORIGINAL: Record<
  number,
  { requests?: string; busy?: string; cpu?: string; bytes?: string; perMin?: string; rss?: string; first?: string }
> = {
  10_000: { requests: '390', busy: '0.99 s', rss: '48.5' },
  50_000: {
    requests: '1935',
    busy: '4.72 s',
    cpu: '~3.6 s (75.5 CPU-s / 120 s, 5.7 s cycles)',
    bytes: '33.9 MB',
    perMin: '354 MB',
    rss: '84',
    first: '11.8 s',
  },
};

export function cycleRows(n: number, runs: readonly CycleRun[]): Row[] {
  const o = ORIGINAL[n] ?? {};
  const k = `${n / 1000}k pending`;
  const row = (metric: string, xs: number[], unit: string, digits: number, original?: string): Row => ({
    metric: `${k}: ${metric}`,
    value: `${fmt(median(xs), digits)}${unit} (${range(xs, digits)})`,
    runs: xs.map((x) => fmt(x, digits)).join(', '),
    original,
  });
  const of = (f: (r: CycleRun) => number | null): number[] => runs.map((r) => f(r) ?? NaN);
  const sessions = median(runs.map((r) => r.sessions)) ?? 0;
  return [
    row(
      'spawn to first heartbeat',
      of((r) => r.firstBeatMs),
      ' ms',
      0,
    ),
    row(
      'CFS requests per steady cycle',
      of((r) => r.requestsPerCycle),
      '',
      1,
      o.requests,
    ),
    row(
      'busy time per steady cycle',
      of((r) => r.cycleMs),
      ' ms',
      0,
      o.busy,
    ),
    row(
      'batcher CPU per steady cycle',
      of((r) => r.cpuPerCycleS),
      ' s',
      2,
      o.cpu,
    ),
    row(
      'bytes from CFS per steady cycle',
      of((r) => r.bytesPerCycle / 1e6),
      ' MB',
      2,
      o.bytes,
    ),
    row(
      'bytes from CFS per minute',
      of((r) => r.bytesPerMinute / 1e6),
      ' MB',
      1,
      o.perMin,
    ),
    row(
      'first cycle (creates)',
      of((r) => r.firstCycleMs),
      ' ms',
      0,
      o.first,
    ),
    row(
      'time until all in sessions',
      of((r) => r.fillSeconds),
      ' s',
      1,
    ),
    row(
      'batcher CPU until all in sessions',
      of((r) => r.fillCpuS),
      ' s',
      2,
    ),
    row(
      'batcher peak RSS (VmHWM)',
      of((r) => r.peakRssMb),
      ' MB',
      1,
      o.rss ? `${o.rss} MB` : undefined,
    ),
    row(
      `restart with ${sessions} sessions in flight -> rebuilt`,
      of((r) => r.rebuildWallS),
      ' s',
      2,
    ),
  ];
}

/** The runtime floor: what node alone and the least reading program peak at, beside the batcher's own peak. */
export function floorRows(n: number, runs: readonly FloorRun[]): Row[] {
  const k = `${n / 1000}k pending`;
  const rss = ORIGINAL[n]?.rss;
  const row = (metric: string, xs: number[], original?: string): Row => ({
    metric: `${k}: ${metric}`,
    value: `${fmt(median(xs), 1)} MB (${range(xs, 1)})`,
    runs: xs.map((x) => fmt(x, 1)).join(', '),
    original,
  });
  return [
    row(
      'runtime floor: node alone, peak RSS',
      runs.map((r) => r.bareMb),
    ),
    row(
      'runtime floor: least program reading and holding them, peak RSS',
      runs.map((r) => r.readMb),
      rss ? `${rss} MB (its peak)` : undefined,
    ),
  ];
}

/** Explain latency during a cycle: median over the runs, each run with its load average beside it. */
export function explainRows(runs: readonly ExplainRun[]): Row[] {
  if (runs.length === 0) return [];
  const k = `explain @${runs[0]!.components / 1000}k pending, during a cycle`;
  const picks: [string, (r: ExplainRun) => number | null][] = [
    ['p50', (r) => r.p50Ms],
    ['p99 (target 50 ms)', (r) => r.p99Ms],
    ['p99 of CFS lookups (unknown ids)', (r) => r.lookupP99Ms],
  ];
  return picks.map(([label, pick]) => ({
    metric: `${k}: ${label}`,
    value: `${fmt(median(runs.map((r) => pick(r) ?? NaN)), 2)} ms`,
    runs: runs.map((r) => `${fmt(pick(r), 2)} (load ${r.loadAverage[0]!.toFixed(2)})`).join(', '),
  }));
}
