/**
 * Monitoring is optional: the base applies without the prometheus-operator CRDs, the CSM overlay adds them, and the
 * PodMonitor sets the job names a plain Prometheus would use too.
 * Rendering is kubectl kustomize's: without kubectl the block is skipped and listed at the end of the run.
 */
import { describeWithTool } from '../helpers/requires';
import { find, KUBECTL, render, type K8sObject } from './manifest-helpers';

// Rendered before the first test that runs (never while jest collects, so a machine without kubectl skips).
let base: K8sObject[];
let csm: K8sObject[];
beforeAll(() => {
  base = render('manifests/base');
  csm = render('manifests/overlays/csm');
});

describeWithTool(KUBECTL, 'monitoring is optional at apply time', () => {
  const CRD_GROUP = 'monitoring.coreos.com/';

  it('the base uses built-in kinds only, so it applies on a cluster without the prometheus-operator CRDs', () => {
    const builtIn = new Set(['v1', 'apps/v1', 'networking.k8s.io/v1']);
    expect(base.map((o) => o.apiVersion).filter((v) => !builtIn.has(v))).toEqual([]);
  });

  it('the CSM overlay adds the PodMonitor and the PrometheusRule from the monitoring Component', () => {
    expect(
      csm
        .filter((o) => o.apiVersion.startsWith(CRD_GROUP))
        .map((o) => o.kind)
        .sort(),
    ).toEqual(['PodMonitor', 'PrometheusRule']);
    expect(csm.length).toBe(base.length + 2);
  });

  it('every PodMonitor endpoint sets its job after the operator default (<namespace>/<name>)', () => {
    const pm = find(csm, 'PodMonitor');
    const jobs = (
      pm.spec.podMetricsEndpoints as Array<{ port: string; relabelings?: Array<Record<string, unknown>> }>
    ).map((e) => {
      const last = (e.relabelings ?? []).filter((r) => r.targetLabel === 'job').at(-1);
      return [e.port, last?.replacement, last?.sourceLabels ?? [], last?.action ?? 'replace'];
    });
    expect(jobs.sort()).toEqual([
      ['health', 'cfs-batcher-health', [], 'replace'],
      ['metrics', 'cfs-batcher', [], 'replace'],
    ]);
  });
});
