/**
 * The CSM overlay's monitoring settings (manifests/overlays/csm/monitoring.env), as `kubectl kustomize` renders them:
 * the label CSM's Prometheus selects the PodMonitor and the PrometheusRule by, and runbook links that are absolute
 * URLs, so they can be clicked from Alertmanager and the receivers it notifies. Skipped without kubectl (listed at
 * the end of the run; a failure under CI).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describeWithTool } from '../helpers/requires';
import { find, KUBECTL, render, ROOT, type K8sObject } from './manifest-helpers';

const OVERLAY = 'manifests/overlays/csm';
/** cray-sysmgmt-health's Prometheus (kube-prometheus-stack) selects rules and pod monitors with this label. */
const CSM_SELECTOR = { release: 'cray-sysmgmt-health' };

/** KEY=value lines of an env file (comments and blank lines skipped), as kustomize's configMapGenerator reads them. */
function envFile(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

const settings = envFile(path.join(ROOT, OVERLAY, 'monitoring.env'));
describeWithTool(KUBECTL, 'CSM overlay: monitoring settings', () => {
  let csm: K8sObject[];
  beforeAll(() => (csm = render(OVERLAY)));

  test('the settings file names the runbook URL, the selector label and the monitoring namespace', () => {
    expect(Object.keys(settings).sort()).toEqual(['MONITORING_NAMESPACE', 'PROMETHEUS_RELEASE_LABEL', 'RUNBOOK_URL']);
  });

  test.each(['PodMonitor', 'PrometheusRule'])('the %s carries the label cray-sysmgmt-health selects on', (kind) => {
    const labels = (find(csm, kind).metadata as { labels?: Record<string, string> }).labels;
    expect(labels).toMatchObject({ release: settings.PROMETHEUS_RELEASE_LABEL });
    expect(labels).toMatchObject(CSM_SELECTOR);
  });

  test('every runbook_url is RUNBOOK_URL#<alert>, an absolute http(s) URL', () => {
    const base = settings.RUNBOOK_URL!;
    expect(['https:', 'http:']).toContain(new URL(base).protocol);
    const rules = find(csm, 'PrometheusRule').spec.groups.flatMap(
      (g: { rules: { alert?: string; annotations?: Record<string, string> }[] }) => g.rules,
    ) as { alert?: string; annotations?: Record<string, string> }[];
    const alerts = rules.filter((r) => r.alert);
    expect(alerts.length).toBeGreaterThan(5);
    expect(alerts.map((r) => r.annotations?.runbook_url)).toEqual(
      alerts.map((r) => `${base}#${r.alert!.toLowerCase()}`),
    );
  });

  test('the settings ConfigMap stays local: kustomize reads it and does not emit it', () => {
    expect(csm.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name)).not.toContain(
      'cfs-batcher-monitoring-settings',
    );
  });
});
