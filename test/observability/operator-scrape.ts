/**
 * The relabel part of the scrape config prometheus-operator generates from a PodMonitor endpoint, in the operator's
 * order (generatePodMonitorConfig in its pkg/prometheus/promcfg.go): keep the selected pods, keep the endpoint's
 * port, copy namespace/container/pod, set job to "<namespace>/<podmonitor>" (then jobLabel if set), set endpoint,
 * and only then the endpoint's own relabelings. Written for the tests: service discovery is replaced by static
 * targets that carry the same __meta_kubernetes_* labels pod discovery would give them.
 */

export interface RelabelConfig {
  source_labels?: string[];
  target_label?: string;
  regex?: string;
  replacement?: string;
  action?: string;
  separator?: string;
}

/** The camelCase relabeling of the CRD. */
interface CrdRelabel {
  sourceLabels?: string[];
  targetLabel?: string;
  regex?: string;
  replacement?: string;
  action?: string;
  separator?: string;
}

export interface PodMonitor {
  metadata: { name: string; namespace?: string };
  spec: {
    jobLabel?: string;
    selector: { matchLabels?: Record<string, string> };
    podMetricsEndpoints: { port?: string; path?: string; interval?: string; relabelings?: CrdRelabel[] }[];
  };
}

/** What Kubernetes pod discovery knows about one container port of the pod. */
export interface PodPortTarget {
  address: string;
  namespace: string;
  pod: string;
  container: string;
  portName: string;
  podLabels: Record<string, string>;
}

const sanitize = (name: string): string => name.replace(/[^a-zA-Z0-9_]/g, '_');

/** Pod discovery's labels for one target, as the relabelings see them. */
export function discoveryLabels(t: PodPortTarget): Record<string, string> {
  const out: Record<string, string> = {
    __meta_kubernetes_namespace: t.namespace,
    __meta_kubernetes_pod_name: t.pod,
    __meta_kubernetes_pod_container_name: t.container,
    __meta_kubernetes_pod_container_port_name: t.portName,
    __meta_kubernetes_pod_phase: 'Running',
  };
  for (const [k, v] of Object.entries(t.podLabels)) {
    out[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
    out[`__meta_kubernetes_pod_labelpresent_${sanitize(k)}`] = 'true';
  }
  return out;
}

function fromCrd(r: CrdRelabel): RelabelConfig {
  const out: RelabelConfig = {};
  if (r.sourceLabels) out.source_labels = r.sourceLabels;
  if (r.separator !== undefined) out.separator = r.separator;
  if (r.targetLabel !== undefined) out.target_label = r.targetLabel;
  if (r.regex !== undefined) out.regex = r.regex;
  if (r.replacement !== undefined) out.replacement = r.replacement;
  if (r.action !== undefined) out.action = r.action.toLowerCase();
  return out;
}

/** relabel_configs for endpoint `i` of the PodMonitor, in the operator's order. */
export function operatorRelabelConfigs(pm: PodMonitor, i: number, namespace: string): RelabelConfig[] {
  const ep = pm.spec.podMetricsEndpoints[i]!;
  const r: RelabelConfig[] = [
    { source_labels: ['job'], target_label: '__tmp_prometheus_job_name' },
    { action: 'drop', source_labels: ['__meta_kubernetes_pod_phase'], regex: '(Failed|Succeeded)' },
  ];
  const match = pm.spec.selector.matchLabels ?? {};
  for (const k of Object.keys(match).sort()) {
    r.push({
      action: 'keep',
      source_labels: [
        `__meta_kubernetes_pod_label_${sanitize(k)}`,
        `__meta_kubernetes_pod_labelpresent_${sanitize(k)}`,
      ],
      regex: `(${match[k]});true`,
    });
  }
  if (ep.port) r.push({ action: 'keep', source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: ep.port });
  r.push(
    { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
    { source_labels: ['__meta_kubernetes_pod_container_name'], target_label: 'container' },
    { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
    // The operator's default job: every endpoint of the PodMonitor gets the same one.
    { target_label: 'job', replacement: `${namespace}/${pm.metadata.name}` },
  );
  if (pm.spec.jobLabel) {
    r.push({
      source_labels: [`__meta_kubernetes_pod_label_${sanitize(pm.spec.jobLabel)}`],
      target_label: 'job',
      regex: '(.+)',
      replacement: '${1}',
    });
  }
  if (ep.port) r.push({ target_label: 'endpoint', replacement: ep.port });
  for (const x of ep.relabelings ?? []) r.push(fromCrd(x));
  return r;
}

/**
 * One scrape config per endpoint, like the operator's, over static targets standing in for pod discovery (every
 * container port of the pod is a candidate; the keep rules pick the endpoint's). The interval is the test's.
 */
export function operatorScrapeConfigs(
  pm: PodMonitor,
  namespace: string,
  targets: PodPortTarget[],
  interval: string,
): Record<string, unknown>[] {
  return pm.spec.podMetricsEndpoints.map((ep, i) => ({
    job_name: `podMonitor/${namespace}/${pm.metadata.name}/${i}`,
    scrape_interval: interval,
    scrape_timeout: interval,
    metrics_path: ep.path ?? '/metrics',
    static_configs: targets.map((t) => ({ targets: [t.address], labels: discoveryLabels(t) })),
    relabel_configs: operatorRelabelConfigs(pm, i, namespace),
  }));
}
