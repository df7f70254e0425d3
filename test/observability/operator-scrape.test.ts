/**
 * The relabel order prometheus-operator uses for a PodMonitor endpoint (operator-scrape.ts): its default job
 * "<namespace>/<podmonitor>" comes before the endpoint's relabelings, so only a relabeling can set the job per
 * endpoint. The real-Prometheus test (prometheus-e2e.test.ts) runs the generated config. The shipped PodMonitor is
 * the CSM overlay as kubectl kustomize renders it (skipped without kubectl, listed at the end of the run).
 */
import { find, KUBECTL, render } from '../deploy/manifest-helpers';
import { describeWithTool } from '../helpers/requires';
import { operatorRelabelConfigs, type PodMonitor } from './operator-scrape';

/** The job a target ends with when every replace rule on `job` applies (no source labels, as all of these have none). */
function finalJob(pm: PodMonitor, i: number): string | undefined {
  return operatorRelabelConfigs(pm, i, 'services')
    .filter((r) => r.target_label === 'job' && (r.action ?? 'replace') === 'replace' && !r.source_labels)
    .at(-1)?.replacement;
}

describeWithTool(KUBECTL, 'operator relabel order', () => {
  let shipped: PodMonitor;
  beforeAll(() => {
    shipped = find(render('manifests/overlays/csm'), 'PodMonitor') as unknown as PodMonitor;
  });

  test('the operator default job comes first, then the endpoint relabelings, in order', () => {
    const r = operatorRelabelConfigs(shipped, 0, 'services');
    const defaultAt = r.findIndex((x) => x.target_label === 'job' && x.replacement === 'services/cfs-batcher');
    const ownAt = r.findIndex((x) => x.target_label === 'job' && x.replacement === 'cfs-batcher');
    expect(defaultAt).toBeGreaterThan(-1);
    expect(ownAt).toBeGreaterThan(defaultAt);
    expect(r.at(-1)).toEqual({ target_label: 'job', replacement: 'cfs-batcher' });
    expect(
      r.find((x) => x.action === 'keep' && x.source_labels?.[0] === '__meta_kubernetes_pod_container_port_name')?.regex,
    ).toBe('metrics');
  });

  test('the shipped PodMonitor gives each endpoint its own job', () => {
    expect(shipped.spec.podMetricsEndpoints.map((_, i) => finalJob(shipped, i))).toEqual([
      'cfs-batcher',
      'cfs-batcher-health',
    ]);
  });

  test('without relabelings both endpoints would share the operator default (the alerts select the jobs cfs-batcher and cfs-batcher-health)', () => {
    const bare = structuredClone(shipped);
    for (const ep of bare.spec.podMetricsEndpoints) delete ep.relabelings;
    expect(bare.spec.podMetricsEndpoints.map((_, i) => finalJob(bare, i))).toEqual([
      'services/cfs-batcher',
      'services/cfs-batcher',
    ]);
  });
});
