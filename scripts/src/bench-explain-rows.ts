/** The explain bench's table rows and its per-run log line: latency during a cycle, with the load each run saw. */
import type { ExplainRun } from './bench-explain';
import { fmt, median, type Row } from './bench-stats';

/** Explain latency during a cycle: median over the runs, each run with its load average beside it. */
export function explainRows(runs: readonly ExplainRun[]): Row[] {
  if (runs.length === 0) return [];
  const limit = runs[0]!.cpuQuota;
  const k = `explain @${runs[0]!.components / 1000}k pending, during a cycle${limit === null ? '' : `, CPU limit ${limit}`}`;
  const picks: [string, (r: ExplainRun) => number | null, string][] = [
    ['answers timed', (r) => r.inCycle, ''],
    ['p50', (r) => r.p50Ms, ' ms'],
    ['p95', (r) => r.p95Ms, ' ms'],
    ['p99 (target 50 ms)', (r) => r.p99Ms, ' ms'],
    ['max', (r) => r.maxMs, ' ms'],
    ['p99 of CFS lookups (unknown ids)', (r) => r.lookupP99Ms, ' ms'],
    ['event-loop delay max', (r) => r.loopDelayMaxMs, ' ms'],
  ];
  return picks.map(([label, pick, unit]) => ({
    metric: `${k}: ${label}`,
    value: `${fmt(median(runs.map((r) => pick(r) ?? NaN)), unit ? 2 : 0)}${unit}`,
    runs: runs.map((r) => `${fmt(pick(r), unit ? 2 : 0)} (load ${r.loadAverage[0]!.toFixed(2)})`).join(', '),
  }));
}

function throttled(r: ExplainRun): string {
  const t = r.throttling;
  if (r.cpuQuota === null || !t) return '';
  return `CPU limit ${r.cpuQuota}: throttled in ${t.throttledPeriods} of ${t.periods} periods (${fmt(t.throttledMs, 0)} ms); `;
}

function memory(r: ExplainRun): string {
  if (r.memoryLimitMi === null) return '';
  return `memory limit ${r.memoryLimitMi} MiB: peak RSS ${fmt(r.peakRssMb, 1)} MB, OOM kills ${r.oomKills ?? 'n/a'}; `;
}

/** One run's line in the bench's log. */
export function explainLine(r: ExplainRun): string {
  const gc = r.gc
    ? Object.entries(r.gc)
        .map(([k, g]) => `${k} ${g.count} (${fmt(g.totalMs, 0)} ms, ${g.over10ms} over 10 ms)`)
        .join(', ')
    : 'n/a';
  return (
    `${r.inCycle} answers during ${r.cycles} cycles (${r.sent} sent ${JSON.stringify(r.states)}): p50 ${fmt(r.p50Ms, 2)} ms, ` +
    `p95 ${fmt(r.p95Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, max ${fmt(r.maxMs, 1)} ms; CFS lookups p50 ${fmt(r.lookupP50Ms, 2)} ms, ` +
    `p99 ${fmt(r.lookupP99Ms, 2)} ms; event-loop delay max ${fmt(r.loopDelayMaxMs, 1)} ms, p99 ${fmt(r.loopDelayP99Ms, 1)} ms; ` +
    `GC ${gc}; ${throttled(r)}${memory(r)}load average ${r.loadAverage.map((x) => x.toFixed(2)).join(' ')}`
  );
}
