/**
 * The table rows of the cycle, floor, convergence, /livez and soak benches, with the original batcher's figures beside
 * them (the explain bench's rows are in bench-explain-rows.ts).
 */
import type { ConvergeRun } from './bench-converge';
import type { CycleRun } from './bench-cycle';
import type { FloorRun } from './bench-floor';
import type { LivezRun } from './bench-livez';
import type { SoakRun } from './bench-soak';
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

/** The original batcher against an operator that starts sessions within a second (check interval 1, 3 runs). */
const ORIGINAL_CONVERGE: Record<number, string> = {
  10_000: '16.8-17.9 s',
  50_000: '26-35 s, 10-14 CPU-s; steady 1935 requests, 2.5-3.3 CPU-s a cycle',
};

/** One row per size, operator and pacing: convergence, then the steady cycles after it. */
export function convergeRows(runs: readonly ConvergeRun[]): Row[] {
  const groups = new Map<string, ConvergeRun[]>();
  for (const r of runs) {
    const k = `${r.components / 1000}k pending, ${r.operator} operator, pacing ${r.pacing}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const rows: Row[] = [];
  for (const [k, rs] of groups) {
    const of = (f: (r: ConvergeRun) => number | null): number[] => rs.map((r) => f(r) ?? NaN);
    const med = (f: (r: ConvergeRun) => number | null, digits: number): string => fmt(median(of(f)), digits);
    const converged = rs.filter((r) => r.converged).length;
    rows.push({
      metric: `converge ${k}: seconds / CPU-s / requests until all in sessions`,
      value: `${med((r) => r.seconds, 1)} s / ${med((r) => r.cpuS, 2)} / ${med((r) => r.requests, 0)}`,
      runs: `${converged}/${rs.length} converged; s ${of((r) => r.seconds)
        .map((x) => fmt(x, 1))
        .join(', ')}; CPU-s ${of((r) => r.cpuS)
        .map((x) => fmt(x, 2))
        .join(', ')}`,
      original: rs[0]!.operator === 'prompt' ? ORIGINAL_CONVERGE[rs[0]!.components] : undefined,
    });
    rows.push({
      metric: `converge ${k}: until all started: seconds, pending peak / deleted while pending / sessions`,
      value: `${med((r) => r.startedSeconds, 1)} s, ${med((r) => r.pendingPeak, 0)} / ${med((r) => r.deletedWhilePending, 0)} / ${med((r) => r.sessions, 0)}`,
      runs: rs
        .map((r) => `${fmt(r.startedSeconds, 1)} s ${r.pendingPeak}/${r.deletedWhilePending}/${r.sessions}`)
        .join(', '),
    });
    rows.push(shapeRow(k, rs));
    rows.push({
      metric: `converge ${k}: steady requests / CPU-s per cycle, peak RSS`,
      value: `${med((r) => r.requestsPerSteadyCycle, 1)} / ${med((r) => r.cpuPerSteadyCycleS, 2)}, ${med((r) => r.peakRssMb, 1)} MB`,
      runs: rs.map((r) => `${fmt(r.cpuPerSteadyCycleS, 2)}, ${fmt(r.peakRssMb, 1)}`).join('; '),
    });
  }
  return rows;
}

/** The operator shape's figures, run by run (bench-converge-shapes.ts). */
function shapeRow(k: string, rs: readonly ConvergeRun[]): Row {
  const one = (r: ConvergeRun): string => {
    const f = r.shape;
    const parts = [`allowance peak ${fmt(f.allowancePeak, 0)}`];
    if (f.createdWhileStopped !== null)
      parts.push(
        `${f.createdWhileStopped} created after the stop, the last ${fmt(f.stoppedAfterS, 1)} s after it; next create ${fmt(f.resumedAfterS, 1)} s after the resume`,
      );
    if (f.allowanceAtJump !== null)
      parts.push(
        `allowance ${f.allowanceAtJump} at the jump, low ${fmt(f.allowanceLowInJump, 0)}, back ${fmt(f.recoveredAfterS, 1)} s after the drop`,
      );
    return parts.join(', ');
  };
  return { metric: `converge ${k}: pacing`, value: one(rs[0]!), runs: rs.map(one).join(' | ') };
}

/** The sidecar's /livez latency and failures over the runs. */
export function livezRows(runs: readonly LivezRun[]): Row[] {
  if (runs.length === 0) return [];
  return [
    {
      metric: 'sidecar /livez p50 @200 req/s',
      value: `${fmt(median(runs.map((r) => r.p50Ms ?? NaN)), 2)} ms`,
      runs: runs.map((r) => fmt(r.p50Ms, 2)).join(', '),
    },
    {
      metric: 'sidecar /livez p99 @200 req/s',
      value: `${fmt(median(runs.map((r) => r.p99Ms ?? NaN)), 2)} ms`,
      runs: runs.map((r) => fmt(r.p99Ms, 2)).join(', '),
    },
    {
      metric: 'sidecar /livez failed answers',
      value: String(median(runs.map((r) => r.failed))),
      runs: runs.map((r) => `${r.failed}/${r.sent}`).join(', '),
    },
  ];
}

/** The soak's invariants (overlaps, components never configured), deletions and /livez failures. */
export function soakRows(soak: SoakRun): Row[] {
  const k = `soak ${soak.components / 1000}k, ${soak.ambiguousInjected} ambiguous creates, ${soak.kills} SIGKILLs`;
  return [
    {
      metric: `${k}: overlaps / not configured`,
      value: `${soak.overlaps} / ${soak.notConfigured}`,
      runs: `${soak.sessions} sessions, ${soak.seconds.toFixed(0)} s`,
    },
    {
      metric: `${k}: pending-timeout deletions / pending peak`,
      value: `${soak.pendingTimeoutDeletions} / ${soak.pendingPeak}`,
      runs: '1',
    },
    {
      metric: `${k}: /livez failures`,
      value: soak.livezFailures === null ? 'no sidecar' : String(soak.livezFailures),
      runs: JSON.stringify(soak.livezReasons),
    },
  ];
}
