/**
 * Helpers for the observability tests: metric names used by a PromQL expression, the metric catalogue of
 * docs/CONTRACTS.md, the names in a Prometheus text exposition, and running promtool.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const REPO = path.resolve(__dirname, '..', '..');

/** Metrics the alerts and dashboard read that come from other exporters (kube-state-metrics, Prometheus itself). */
export const EXTERNAL_METRICS = new Set(['up', 'kube_pod_container_status_restarts_total']);

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/** Metric names selected by a PromQL expression (functions, keywords, labels, durations and strings excluded). */
export function metricNamesInExpr(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // string literals (label values, label_replace arguments)
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // range and subquery selectors
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // grouping label lists
    .replace(/\$\{?\w+\}?/g, ' '); // Grafana variables
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\()?)/g)) {
    const name = m[0];
    if (m[1] === '(' || KEYWORDS.has(name.toLowerCase())) continue; // a function call or an operator
    const before = stripped.slice(0, m.index);
    if (/[0-9.]$/.test(before)) continue; // unit of a number like 5m or 1e3
    names.add(name);
  }
  return [...names].sort();
}

/** Metric names listed in the Metrics section of docs/CONTRACTS.md (backticked first column). */
export function catalogueMetricNames(
  contracts = readFileSync(path.join(REPO, 'docs', 'CONTRACTS.md'), 'utf8'),
): Set<string> {
  const section = contracts.split(/^## /m).find((s) => s.startsWith('Metrics')) ?? '';
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const m = /^\|\s*`([a-z_:][a-z0-9_:]*)`\s*\|/.exec(line);
    if (m?.[1]) names.add(m[1]);
  }
  return names;
}

export interface ExposedMetric {
  name: string;
  type: string;
}

/** The metric families in a text exposition (from its `# TYPE` lines). */
export function exposedMetrics(text: string): ExposedMetric[] {
  const out: ExposedMetric[] = [];
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.push({ name: m[1]!, type: m[2]! });
  return out;
}

/** Every series name a query may select from these families (histograms add _bucket/_sum/_count). */
export function selectableNames(families: ExposedMetric[]): Set<string> {
  const names = new Set<string>();
  for (const f of families) {
    names.add(f.name);
    if (f.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(f.name + s);
    if (f.type === 'summary') for (const s of ['_sum', '_count']) names.add(f.name + s);
  }
  return names;
}

/** Is a series name covered by the catalogue (a histogram's _bucket/_sum/_count counts as its family)? */
export function inCatalogue(name: string, catalogue: Set<string>): boolean {
  return catalogue.has(name) || catalogue.has(name.replace(/_(bucket|sum|count)$/, ''));
}

export interface PromtoolResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run promtool; throws (fails the test) when it is not installed: CI installs Debian's prometheus package. */
export function promtool(args: string[], o: { cwd?: string; input?: string } = {}): PromtoolResult {
  const r = spawnSync('promtool', args, { cwd: o.cwd, input: o.input, encoding: 'utf8', timeout: 60_000 });
  if (r.error) {
    throw new Error(`promtool could not run (${r.error.message}); install it (Debian: apt-get install prometheus)`);
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * prom-client's default metrics that `promtool check metrics` flags: these gauges end in _total. They are
 * prom-client's names, not ours; any other problem fails the test.
 */
export const KNOWN_DEFAULT_METRIC_LINT = [
  'nodejs_active_handles_total non-counter metrics should not have "_total" suffix',
  'nodejs_active_requests_total non-counter metrics should not have "_total" suffix',
  'nodejs_active_resources_total non-counter metrics should not have "_total" suffix',
];

/** `promtool check metrics` on an exposition: the problems it reports, minus the known prom-client ones. */
export function checkMetrics(exposition: string): { status: number | null; problems: string[] } {
  const r = promtool(['check', 'metrics'], { input: exposition });
  const problems = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !KNOWN_DEFAULT_METRIC_LINT.includes(l));
  return { status: r.status, problems };
}
