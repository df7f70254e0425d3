/** The dashboard's queries with Grafana variables filled in, and the vector selectors inside a PromQL expression. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { REPO, metricNamesInExpr } from './promql';

export const DASHBOARD_FILE = path.join(REPO, 'manifests', 'base', 'observability', 'dashboard-configmap.yaml');

export interface PanelQuery {
  panel: string;
  refId: string;
  expr: string;
}

/** Every panel target, with $namespace and $__rate_interval replaced. */
export function dashboardQueries(vars: { namespace: string; rateInterval: string }): PanelQuery[] {
  const cm = YAML.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { data: Record<string, string> };
  const d = JSON.parse(cm.data['cfs-batcher.json']!) as {
    panels: { title: string; targets?: { refId: string; expr: string }[] }[];
  };
  return d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      panel: p.title,
      refId: t.refId,
      expr: t.expr.replace(/\$\{?namespace\}?/g, vars.namespace).replace(/\$\{?__rate_interval\}?/g, vars.rateInterval),
    })),
  );
}

/** The vector selectors of an expression (name plus matchers), optionally without some label matchers. */
export function selectorsIn(expr: string, o: { dropLabels?: string[] } = {}): string[] {
  const out = new Set<string>();
  for (const name of metricNamesInExpr(expr)) {
    for (const m of expr.matchAll(new RegExp(`(?<![\\w:])${name}(?![\\w:])(\\{[^}]*\\})?`, 'g'))) {
      const matchers = (m[1] ?? '{}')
        .slice(1, -1)
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '' && !(o.dropLabels ?? []).some((l) => s.startsWith(l)));
      out.add(`${name}{${matchers.join(', ')}}`);
    }
  }
  return [...out];
}

/** Labelled counters that must be exported at 0 for their known label values (docs/CONTRACTS.md). */
export const INITIALISED_LABELS: Record<string, [string, string[]]> = {
  cfs_batcher_sessions_completed_total: ['result', ['succeeded', 'failed', 'deleted', 'pending_timeout']],
  cfs_batcher_session_create_failures_total: [
    'reason',
    ['http_400', 'http_auth', 'http_404', 'http_409', 'http_4xx', 'http_5xx', 'timeout', 'unreachable', 'invalid'],
  ],
  cfs_batcher_invalid_records_total: ['kind', ['component', 'session', 'options']],
};

/** Gauges that are 0/1 states (docs/CONTRACTS.md describes each as 1 when ... / 0/1). */
export const FLAG_METRICS = new Set([
  'cfs_batcher_health_live',
  'cfs_batcher_health_verdict',
  'cfs_batcher_health_cfs_reachable',
  'cfs_batcher_health_pending_components',
  'cfs_batcher_health_creating_state',
  'cfs_batcher_disabled',
  'cfs_batcher_pacing_limited',
  'cfs_batcher_standing_down',
]);

/** What a query's values are, hence the unit its panel must show; two kinds never share a panel. */
export type ValueKind =
  'per_second' | 'per_interval' | 'seconds' | 'flag' | 'count' | 'timestamp' | 'info' | 'per_minute';

/** The Grafana units each kind may be shown in. */
export const UNITS_OF_KIND: Record<ValueKind, string[]> = {
  per_second: ['reqps', 'ops', 'cps'],
  per_interval: ['short'],
  seconds: ['s'],
  flag: ['none', 'bool'],
  count: ['short'],
  timestamp: ['dateTimeFromNow', 'dateTimeAsIso'],
  info: ['none'],
  per_minute: ['opm', 'cpm'],
};

/** Pure: the kind of values a dashboard query gives, from its functions and the metrics it reads. */
export function valueKind(expr: string): ValueKind {
  if (/\bhistogram_quantile\(/.test(expr)) return 'seconds';
  if (/\brate\(/.test(expr)) return 'per_second';
  if (/\bincrease\(/.test(expr)) return 'per_interval';
  const names = metricNamesInExpr(expr);
  const kinds = new Set(
    names.map((n): ValueKind => {
      if (n.endsWith('_timestamp_seconds')) return /\btime\(\)\s*-/.test(expr) ? 'seconds' : 'timestamp';
      if (n.endsWith('_seconds')) return 'seconds';
      if (FLAG_METRICS.has(n)) return 'flag';
      if (n.endsWith('_info')) return 'info';
      if (n.endsWith('_per_minute_cap')) return 'per_minute';
      return 'count';
    }),
  );
  if (kinds.size !== 1) throw new Error(`one query mixes ${[...kinds].join(' and ')}: ${expr}`);
  return [...kinds][0]!;
}
