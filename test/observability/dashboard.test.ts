/**
 * The Grafana dashboard ConfigMap: provisioning labels, dashboard essentials, the panels the issue asks for, and every
 * query naming only metrics the programs really export (their registries' /metrics output) or kube-state-metrics.
 * Also `promtool check metrics` on both programs' /metrics output, and the kustomization listing both manifests.
 * The promtool and kubectl blocks are skipped without those tools and listed at the end of the run (CI: a failure).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { createMetrics } from '@cfs-batcher/batcher';
import { CFS_CLIENT_DEFAULTS } from '@cfs-batcher/shared';
import { SidecarMetrics, thresholdsFromEnv } from '@cfs-batcher/sidecar-health';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec } from '../../scripts/src/pod-spec';
import {
  EXTERNAL_METRICS,
  REPO,
  catalogueMetricNames,
  checkMetrics,
  exposedMetrics,
  inCatalogue,
  metricNamesInExpr,
  selectableNames,
} from './promql';
import { KUBECTL } from '../deploy/manifest-helpers';
import { describeWithTool } from '../helpers/requires';
import { INITIALISED_LABELS, UNITS_OF_KIND, valueKind } from './queries';

const OBS_DIR = path.join(REPO, 'manifests', 'base', 'observability');

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; legendFormat?: string }[];
  fieldConfig?: { defaults: { unit?: string; thresholds?: { steps: { color: string; value: number | null }[] } } };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  templating: { list: { name: string; type: string; query?: unknown }[] };
  panels: Panel[];
}

const configMap = YAML.parse(readFileSync(path.join(OBS_DIR, 'dashboard-configmap.yaml'), 'utf8')) as {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string> };
  data: Record<string, string>;
};

function dashboard(): Dashboard {
  return JSON.parse(configMap.data['cfs-batcher.json'] ?? 'null') as Dashboard;
}

function queries(d: Dashboard): { panel: string; expr: string }[] {
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The two programs' /metrics text, from the registries their main() serves (a few series filled in). */
async function expositions(): Promise<{ batcher: string; sidecar: string }> {
  const b = createMetrics({ version: '0.0.0-test' });
  b.observeRequest({ method: 'GET', route: '/v3/components', status: '200', durationMs: 12 });
  b.observeRequest({ method: 'GET', route: '/v3/sessions/{session_name}', status: '404', durationMs: 3 });
  b.cycles.inc({ outcome: 'ok' });
  b.cycleDuration.observe(0.4);
  b.sessionCreateFailures.inc({ reason: 'http_400' });
  b.sessionsCompleted.inc({ result: 'succeeded' });
  const s = new SidecarMetrics();
  s.countProbe('/livez', 200);
  return { batcher: await b.registry.metrics(), sidecar: await s.registry.metrics() };
}

describe('dashboard ConfigMap', () => {
  test('is a ConfigMap the Grafana sidecar provisions', () => {
    expect(configMap.apiVersion).toBe('v1');
    expect(configMap.kind).toBe('ConfigMap');
    expect(configMap.metadata.labels.grafana_dashboard).toBe('1');
    expect(Object.keys(configMap.data)).toEqual(['cfs-batcher.json']);
  });

  test('holds a dashboard with a stable uid, a Prometheus data source variable and laid-out panels', () => {
    const d = dashboard();
    expect(d.uid).toBe('cfs-batcher');
    expect(d.title).toBe('CFS batcher');
    expect(d).not.toHaveProperty('id'); // provisioned dashboards must not carry a database id
    expect(d.templating.list.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of d.panels) {
      expect(p.gridPos.w).toBeGreaterThan(0);
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      if (p.type !== 'row') {
        expect([p.title, p.datasource?.uid]).toEqual([p.title, '${datasource}']);
        expect([p.title, (p.targets ?? []).length > 0]).toEqual([p.title, true]);
      }
    }
  });

  test('has the panels the issue asks for', () => {
    const byTitle = new Map(dashboard().panels.map((p) => [p.title, p]));
    const exprsOf = (title: string): string => (byTitle.get(title)?.targets ?? []).map((t) => t.expr).join('\n');
    expect(exprsOf('Heartbeat age')).toContain('cfs_batcher_health_heartbeat_age_seconds');
    expect(exprsOf('Cycle duration')).toContain('cfs_batcher_cycle_duration_seconds_bucket');
    expect(exprsOf('Sessions by result')).toContain('cfs_batcher_sessions_completed_total');
    expect(exprsOf('Pending components and batches')).toContain('cfs_batcher_pending_components');
    expect(exprsOf('CFS errors')).toContain('cfs_batcher_cfs_requests_total');
    expect(exprsOf('Restarts (1h)')).toContain('kube_pod_container_status_restarts_total');
    expect(exprsOf('Restarts (1h)')).toContain('cfs_batcher_health_batcher_restarts_total');
  });

  test('panel titles are unique', () => {
    const titles = dashboard()
      .panels.filter((p) => p.type !== 'row')
      .map((p) => p.title);
    expect(titles.filter((t, i) => titles.indexOf(t) !== i)).toEqual([]);
  });

  test('every metric the programs export (their own, not process/nodejs defaults) is on some panel', async () => {
    const { batcher, sidecar } = await expositions();
    const used = new Set(
      queries(dashboard()).flatMap((q) => metricNamesInExpr(q.expr).map((n) => n.replace(/_(bucket|sum|count)$/, ''))),
    );
    const own = [...exposedMetrics(batcher), ...exposedMetrics(sidecar)]
      .map((f) => f.name)
      .filter((n) => n.startsWith('cfs_batcher_'));
    expect(own.filter((n) => !used.has(n))).toEqual([]);
  });

  test('every query names metrics in the CONTRACTS.md catalogue', () => {
    const catalogue = catalogueMetricNames();
    const unknown = queries(dashboard()).flatMap((q) =>
      metricNamesInExpr(q.expr)
        .filter((n) => !inCatalogue(n, catalogue) && !EXTERNAL_METRICS.has(n))
        .map((n) => `${q.panel}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });

  test('every query names metrics the batcher and sidecar really export', async () => {
    const { batcher, sidecar } = await expositions();
    const real = selectableNames([...exposedMetrics(batcher), ...exposedMetrics(sidecar)]);
    const unknown = queries(dashboard()).flatMap((q) => {
      const names = metricNamesInExpr(q.expr);
      expect([q.expr, names.length > 0]).toEqual([q.expr, true]);
      return names.filter((n) => !real.has(n) && !EXTERNAL_METRICS.has(n)).map((n) => `${q.panel}: ${n}`);
    });
    expect(unknown).toEqual([]);
  });
});

/** A setting as the shipped manifest sets it on a container, else its default in the program's own configuration. */
function shipped(containerName: string, name: string): string | undefined {
  return loadPodSpec(REPO).containers[containerName]!.env.find((e) => e.name === name)?.value;
}

describe('dashboard units and thresholds', () => {
  test('one kind of value per panel, shown in a unit that fits it', () => {
    const wrong: string[] = [];
    for (const p of dashboard().panels.filter((x) => x.type !== 'row')) {
      const kinds = [...new Set((p.targets ?? []).map((t) => valueKind(t.expr)))];
      const unit = p.fieldConfig?.defaults.unit ?? '';
      if (kinds.length !== 1) wrong.push(`${p.title}: mixes ${kinds.join(', ')}`);
      else if (!UNITS_OF_KIND[kinds[0]!].includes(unit)) wrong.push(`${p.title}: ${kinds[0]} shown as unit "${unit}"`);
    }
    expect(wrong).toEqual([]);
  });

  test('the kind rule notices a panel that mixes a rate with an increase (the check can fail)', () => {
    const kinds = ['sum(rate(a_total[5m]))', 'sum(increase(b_total[5m]))', 'max(cfs_batcher_disabled)'].map(valueKind);
    expect(kinds).toEqual(['per_second', 'per_interval', 'flag']);
    expect(() => valueKind('cfs_batcher_disabled + cfs_batcher_backoff_seconds')).toThrow(/mixes/);
  });

  test('"Heartbeat age" shows the sidecar\'s monotonic age, red from the freshness limit where /livez fails', () => {
    const freshnessS = thresholdsFromEnv({}).freshnessMs / 1000;
    // the manifest ships the program's default (one value, two places that must agree)
    expect(Number(shipped(SIDECAR_CONTAINER, 'SIDECAR_FRESHNESS_SECONDS'))).toBe(freshnessS);
    const callDeadlineS = Number(shipped(BATCHER_CONTAINER, 'CFS_REQUEST_TIMEOUT_MS')) / 1000;
    expect(callDeadlineS).toBe(CFS_CLIENT_DEFAULTS.requestTimeoutMs / 1000);
    const stat = dashboard().panels.find((p) => p.title === 'Heartbeat age')!;
    expect(stat.type).toBe('stat');
    expect(stat.targets!.map((t) => metricNamesInExpr(t.expr))).toEqual([['cfs_batcher_health_heartbeat_age_seconds']]);
    expect(stat.targets!.some((t) => t.expr.includes('time()'))).toBe(false);
    expect(stat.fieldConfig?.defaults.unit).toBe('s');
    // green while the loop beats, orange past one CFS call deadline, red where liveness fails
    expect(stat.fieldConfig?.defaults.thresholds?.steps).toEqual([
      { color: 'green', value: null },
      { color: 'orange', value: callDeadlineS },
      { color: 'red', value: freshnessS },
    ]);
  });
});

describe("the programs' /metrics output", () => {
  test('exports every metric of the CONTRACTS.md catalogue', async () => {
    const { batcher, sidecar } = await expositions();
    const real = selectableNames([...exposedMetrics(batcher), ...exposedMetrics(sidecar)]);
    const missing = [...catalogueMetricNames()].filter((n) => !real.has(n));
    expect(missing).toEqual([]);
  });

  // The batcher creates these series at start (batcher/src/metrics.ts), so rate() and the alerts see them at once.
  test('labelled counters are exported at 0 for every known label value before anything happened', async () => {
    const fresh = await createMetrics({ version: '0.0.0-test' }).registry.metrics();
    const missing: string[] = [];
    for (const [name, [label, values]] of Object.entries(INITIALISED_LABELS)) {
      for (const v of values)
        if (!new RegExp(`^${name}\\{[^}]*${label}="${v}"[^}]*\\} 0$`, 'm').test(fresh))
          missing.push(`${name}{${label}="${v}"}`);
    }
    expect(missing).toEqual([]);
  });

  describeWithTool('promtool', 'promtool check metrics', () => {
    test.each(['batcher', 'sidecar'] as const)('passes on the %s output', async (which) => {
      const text = (await expositions())[which];
      const r = checkMetrics(text);
      expect(r.problems).toEqual([]);
      expect([0, 3]).toContain(r.status); // 3 = only lint findings, all of them known prom-client default names
    });

    test('reports a badly named metric (the check can fail)', () => {
      const r = checkMetrics('# HELP bad_counter A counter\n# TYPE bad_counter counter\nbad_counter 1\n');
      expect(r.problems.join('\n')).toContain('bad_counter');
    });
  });
});

describe('kustomization', () => {
  test('lists the dashboard ConfigMap (the PrometheusRule is in the monitoring Component)', () => {
    const k = YAML.parse(readFileSync(path.join(OBS_DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    expect(k.resources.sort()).toEqual(['dashboard-configmap.yaml']);
  });

  describeWithTool(KUBECTL, 'kubectl kustomize', () => {
    test('renders it', () => {
      const r = spawnSync(KUBECTL, ['kustomize', OBS_DIR], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(0);
      const kinds = YAML.parseAllDocuments(r.stdout).map((d) => (d.toJSON() as { kind: string }).kind);
      expect(kinds.sort()).toEqual(['ConfigMap']);
    });
  });
});
