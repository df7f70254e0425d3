/**
 * What a CSM cluster does to the pod, checked on the manifests as kubectl kustomize renders them: the NetworkPolicy
 * (only Prometheus's namespace and the pod itself reach its ports), tracing off unless an endpoint is configured,
 * the priorityClassName choice the docs state, and Istio in the CSM overlay (start after the proxy, the proxy outlives
 * the batcher, probes and scrapes past the proxy, CFS through the mesh). Without kubectl the block is skipped.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { STOP_DEADLINE_MS } from '@cfs-batcher/batcher';
import { tracingEnabled } from '@cfs-batcher/shared';
import { describeWithTool } from '../helpers/requires';
import { BATCHER, KUBECTL, ROOT, SIDECAR, container, envValue, find, render, type K8sObject } from './manifest-helpers';

let base: K8sObject[];
let csm: K8sObject[];
beforeAll(() => {
  base = render('manifests/base');
  csm = render('manifests/overlays/csm');
});

const DEPLOYMENT_DOC = readFileSync(path.join(ROOT, 'docs', 'deployment.md'), 'utf8');
const RUNBOOK = readFileSync(path.join(ROOT, 'docs', 'runbook.md'), 'utf8');

/** The port numbers of the named container ports of the pod. */
function portNumbers(deploy: K8sObject, names: string[]): number[] {
  const ports = deploy.spec.template.spec.containers.flatMap(
    (c: { ports?: { name: string; containerPort: number }[] }) => c.ports ?? [],
  );
  return names.map((n) => ports.find((p: { name: string }) => p.name === n)!.containerPort);
}

describeWithTool(KUBECTL, 'ready for CSM', () => {
  describe.each([
    ['base', () => base, 'monitoring'],
    ['CSM overlay', () => csm, 'sysmgmt-health'],
  ])('the NetworkPolicy (%s)', (_name, objs, monitoringNs) => {
    it('selects the pod and admits only the monitoring namespace and the pod itself, on its two ports', () => {
      const deploy = find(objs(), 'Deployment', 'cfs-batcher');
      const labels = deploy.spec.template.metadata.labels as Record<string, string>;
      const np = find(objs(), 'NetworkPolicy', 'cfs-batcher');
      expect(np.metadata.namespace).toBe(deploy.metadata.namespace);
      const selects = (sel: { matchLabels: Record<string, string> }): boolean =>
        Object.entries(sel.matchLabels).every(([k, v]) => labels[k] === v);
      expect(selects(np.spec.podSelector)).toBe(true);
      expect(np.spec.policyTypes).toEqual(['Ingress']);
      expect(np.spec.ingress).toHaveLength(1);
      const [rule] = np.spec.ingress;
      expect(rule.from).toHaveLength(2);
      expect(rule.from[0]).toEqual({
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': monitoringNs } },
      });
      expect(Object.keys(rule.from[1])).toEqual(['podSelector']);
      expect(selects(rule.from[1].podSelector)).toBe(true);
      expect(rule.ports.map((p: { port: string }) => p.port)).toEqual(['metrics', 'health']);
      // Named ports the pod really has.
      expect(portNumbers(deploy, ['metrics', 'health'])).toEqual([9088, 8081]);
    });
  });

  it.each([
    ['base', () => base],
    ['CSM overlay', () => csm],
  ])('%s: tracing is off (no exporter endpoint: CSM ships no collector)', (_name, objs) => {
    const cm = objs().find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('cfs-batcher-otel'))!;
    expect(tracingEnabled(cm.data as Record<string, string>)).toBe(false);
    // An overlay that merges an endpoint turns it on.
    expect(tracingEnabled({ ...cm.data, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger-collector.tracing:4318' })).toBe(
      true,
    );
  });

  it('priorityClassName: none, as the docs state', () => {
    for (const objs of [base, csm])
      expect(find(objs, 'Deployment', 'cfs-batcher').spec.template.spec.priorityClassName).toBeUndefined();
    expect(DEPLOYMENT_DOC).toMatch(/\*\*Priority class\.\*\* None is set/);
  });

  describe('Istio (CSM overlay only)', () => {
    let deploy: K8sObject;
    let annotations: Record<string, string>;
    beforeAll(() => {
      deploy = find(csm, 'Deployment', 'cfs-batcher');
      annotations = deploy.spec.template.metadata.annotations ?? {};
    });

    it('the batcher starts after the proxy, and the proxy outlives its last CFS call', () => {
      const config = parse(annotations['proxy.istio.io/config']!) as Record<string, unknown>;
      expect(config.holdApplicationUntilProxyStarts).toBe(true);
      expect(config.proxyMetadata).toEqual({ EXIT_ON_ZERO_ACTIVE_CONNECTIONS: 'true' });
      const drainS = Number(/^(\d+)s$/.exec(String(config.terminationDrainDuration))?.[1]);
      expect(drainS * 1000).toBeGreaterThan(STOP_DEADLINE_MS);
      expect(drainS).toBeLessThan(deploy.spec.template.spec.terminationGracePeriodSeconds);
    });

    it('probes and scrapes reach the ports past the proxy, which are the probed and scraped ones', () => {
      const excluded = annotations['traffic.sidecar.istio.io/excludeInboundPorts']!.split(',').map(Number);
      expect(excluded.sort()).toEqual(portNumbers(deploy, ['health', 'metrics']).sort());
      expect(annotations['sidecar.istio.io/rewriteAppHTTPProbers']).toBe('false');
      for (const name of [BATCHER, SIDECAR]) {
        const c = container(deploy, name);
        for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe].filter(Boolean)) {
          const port = probe.httpGet.port;
          expect(excluded).toContain(typeof port === 'number' ? port : portNumbers(deploy, [port])[0]);
        }
      }
      const monitor = find(csm, 'PodMonitor');
      expect(monitor.spec.podMetricsEndpoints.map((e: { port: string }) => e.port).sort()).toEqual([
        'health',
        'metrics',
      ]);
      expect(monitor.spec.podMetricsEndpoints.every((e: { scheme?: string }) => (e.scheme ?? 'http') === 'http')).toBe(
        true,
      );
    });

    it('CFS through the mesh: the in-cluster service in plain HTTP (the proxy adds mTLS)', () => {
      for (const name of [BATCHER, SIDECAR])
        expect(envValue(container(deploy, name), 'CFS_API_URL')).toBe('http://cray-cfs-api/v3');
    });

    it('the base carries no Istio setting, and the runbook has the line for CFS unreachable right after start', () => {
      const baseAnnotations = find(base, 'Deployment', 'cfs-batcher').spec.template.metadata.annotations ?? {};
      expect(Object.keys(baseAnnotations).filter((k) => k.includes('istio'))).toEqual([]);
      expect(RUNBOOK).toMatch(/CFS unreachable right after start/);
      expect(DEPLOYMENT_DOC).toMatch(/^### Istio$/m);
    });
  });
});
