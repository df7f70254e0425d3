/**
 * The kustomize manifests: every overlay renders, every object passes the Kubernetes schema (and the check really
 * rejects broken objects), and every env var a container sets is one its program reads.
 * Rendering is kubectl kustomize's: without kubectl every block is skipped and listed at the end of the run.
 */
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { BATCHER_SETTINGS } from '@cfs-batcher/batcher';
import { SIDECAR_SETTINGS } from '@cfs-batcher/sidecar-health';
import { describeWithTool } from '../helpers/requires';
import {
  BATCHER,
  container,
  envNamesReadBy,
  find,
  KUBECTL,
  kustomizeDirs,
  render,
  SIDECAR,
  type K8sObject,
} from './manifest-helpers';

const dirs = kustomizeDirs();
// Rendered before the first test that runs (never while jest collects, so a machine without kubectl skips).
const rendered = new Map<string, K8sObject[]>();
let base: K8sObject[];
let csm: K8sObject[];
beforeAll(() => {
  for (const d of dirs) rendered.set(d, render(d));
  base = rendered.get('manifests/base')!;
  csm = rendered.get('manifests/overlays/csm')!;
});

/** Validates one object with its kubernetes-models class, or by hand for the prometheus-operator CRDs. */
function validate(o: K8sObject): void {
  const key = `${o.apiVersion}/${o.kind}`;
  switch (key) {
    case 'apps/v1/Deployment':
      new Deployment(o).validate();
      return;
    case 'v1/Service':
      new Service(o).validate();
      return;
    case 'v1/ConfigMap':
      new ConfigMap(o).validate();
      return;
    case 'networking.k8s.io/v1/NetworkPolicy':
      new NetworkPolicy(o).validate();
      return;
    case 'monitoring.coreos.com/v1/PodMonitor':
      if (
        !o.spec?.selector?.matchLabels ||
        !Array.isArray(o.spec.podMetricsEndpoints) ||
        o.spec.podMetricsEndpoints.length === 0
      ) {
        throw new Error(`PodMonitor ${o.metadata.name}: needs spec.selector.matchLabels and podMetricsEndpoints`);
      }
      return;
    case 'monitoring.coreos.com/v1/PrometheusRule':
      if (
        !Array.isArray(o.spec?.groups) ||
        o.spec.groups.some(
          (g: { name?: unknown; rules?: unknown }) => typeof g.name !== 'string' || !Array.isArray(g.rules),
        )
      ) {
        throw new Error(`PrometheusRule ${o.metadata.name}: spec.groups[] needs name and rules`);
      }
      return;
    default:
      throw new Error(`no schema check for ${key} (${o.metadata?.name}): add one to this test`);
  }
}

for (const dir of dirs)
  describeWithTool(KUBECTL, `kustomize ${dir}`, () => {
    let objs: K8sObject[];
    beforeAll(() => (objs = rendered.get(dir)!));

    it('renders the Deployment, the metrics Service and the ConfigMaps', () => {
      expect(objs.map((o) => o.kind)).toEqual(expect.arrayContaining(['Deployment', 'Service', 'ConfigMap']));
    });

    it('every object validates against its schema', () => {
      for (const o of objs) expect(() => validate(o)).not.toThrow();
    });

    it('every env var a container sets is one its program (or Node/OTel) reads', () => {
      const deploy = find(objs, 'Deployment', 'cfs-batcher');
      const runtime = (n: string) =>
        ['NODE_OPTIONS', 'MALLOC_ARENA_MAX'].includes(n) ||
        n.startsWith('OTEL_') ||
        ['POD_NAME', 'POD_NAMESPACE', 'CONTAINER_NAME'].includes(n);
      const readers: Record<string, Set<string>> = {
        [BATCHER]: new Set([...envNamesReadBy('batcher/src', 'shared/src'), ...BATCHER_SETTINGS.known]),
        [SIDECAR]: new Set([...envNamesReadBy('sidecar-health/src', 'shared/src'), ...SIDECAR_SETTINGS.known]),
      };
      for (const name of [BATCHER, SIDECAR]) {
        const c = container(deploy, name);
        const unknown = (c.env as Array<{ name: string }>)
          .map((e) => e.name)
          .filter((n) => !runtime(n) && !readers[name]!.has(n));
        expect({ container: name, unknown }).toEqual({ container: name, unknown: [] });
      }
      const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('cfs-batcher-otel'))!;
      expect(Object.keys(cm.data).filter((k) => !k.startsWith('OTEL_'))).toEqual([]);
    });
  });

describeWithTool(KUBECTL, 'schema validation really rejects broken objects', () => {
  let deploy: K8sObject;
  beforeAll(() => (deploy = find(base, 'Deployment', 'cfs-batcher')));
  it.each([
    [
      'a non-numeric containerPort',
      (d: K8sObject) => (d.spec.template.spec.containers[0].ports[0].containerPort = 'nine'),
    ],
    ['a container without a name', (d: K8sObject) => delete d.spec.template.spec.containers[1].name],
    ['a Deployment without a selector', (d: K8sObject) => delete d.spec.selector],
    [
      'a string probe period',
      (d: K8sObject) => (d.spec.template.spec.containers[0].livenessProbe.periodSeconds = '10s'),
    ],
  ])('%s', (_what, breakIt) => {
    const broken = structuredClone(deploy);
    breakIt(broken);
    expect(() => validate(deploy)).not.toThrow();
    expect(() => validate(broken)).toThrow();
  });
});

describeWithTool(KUBECTL, 'schema validation rejects broken monitoring objects', () => {
  it.each([
    ['a PodMonitor without endpoints', 'PodMonitor', (o: K8sObject) => (o.spec.podMetricsEndpoints = [])],
    ['a PrometheusRule group without rules', 'PrometheusRule', (o: K8sObject) => delete o.spec.groups[0].rules],
  ])('%s', (_what, kind, breakIt) => {
    const good = find(csm, kind);
    const broken = structuredClone(good);
    breakIt(broken);
    expect(() => validate(good)).not.toThrow();
    expect(() => validate(broken)).toThrow();
  });
});
