/** Pure helpers for the benchmarks: medians, percentiles, and the markdown table. */

export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1] as number;
}

/** min-max of the runs, for "median (min-max)" cells. */
export function range(xs: readonly number[], digits = 1): string {
  const v = xs.filter((x) => !Number.isNaN(x));
  if (v.length === 0) return 'n/a';
  return `${fmt(Math.min(...v), digits)}-${fmt(Math.max(...v), digits)}`;
}

/** utime + stime (clock ticks) from the text of /proc/<pid>/stat; the command name may hold spaces or ')'. */
export function procStatCpuTicks(text: string): number | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/); // fields[0] is field 3 (state)
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : null;
}

export function fmt(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(digits);
}

export interface Row {
  metric: string;
  value: string;
  runs: string;
  original?: string;
}

export function markdownTable(rows: readonly Row[]): string {
  const head = '| metric | median | runs | original batcher |\n| --- | --- | --- | --- |';
  return [head, ...rows.map((r) => `| ${r.metric} | ${r.value} | ${r.runs} | ${r.original ?? ''} |`)].join('\n');
}
