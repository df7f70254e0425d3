/**
 * The pod the CSM overlay renders: one replica, the shared heartbeat volume, the lock-down, resources within the
 * original chart, the CSM wiring (namespace, CFS URL, CA bundle), OTel identity, and the metrics ports.
 * Rendering is kubectl kustomize's: without kubectl the block is skipped and listed at the end of the run.
 */
import { describeWithTool } from '../helpers/requires';
import {
  BATCHER,
  container,
  envValue,
  find,
  KUBECTL,
  quantity,
  render,
  SIDECAR,
  type K8sObject,
} from './manifest-helpers';

// Rendered before the first test that runs (never while jest collects, so a machine without kubectl skips).
let csm: K8sObject[];
beforeAll(() => (csm = render('manifests/overlays/csm')));

describeWithTool(KUBECTL, 'the pod', () => {
  let deploy: K8sObject;
  let spec: K8sObject['spec'];
  let batcher: K8sObject;
  let sidecar: K8sObject;
  beforeAll(() => {
    deploy = find(csm, 'Deployment', 'cfs-batcher');
    spec = deploy.spec.template.spec;
    batcher = container(deploy, BATCHER);
    sidecar = container(deploy, SIDECAR);
  });

  it('one replica, Recreate: two batchers never overlap', () => {
    expect(deploy.spec.replicas).toBe(1);
    expect(deploy.spec.strategy).toEqual({ type: 'Recreate' });
    expect(spec.containers.map((c: { name: string }) => c.name).sort()).toEqual([BATCHER, SIDECAR]);
  });

  it('shares a small in-memory emptyDir at the heartbeat path, read-only in the sidecar', () => {
    const vol = spec.volumes.find((v: { emptyDir?: unknown }) => v.emptyDir);
    expect(vol.emptyDir.medium).toBe('Memory');
    expect(quantity(vol.emptyDir.sizeLimit)).toBeLessThanOrEqual(quantity('8Mi'));
    for (const c of [batcher, sidecar]) {
      const mount = c.volumeMounts.find((m: { name: string }) => m.name === vol.name);
      const hbPath = envValue(c, 'HEARTBEAT_PATH')!;
      expect(hbPath.startsWith(`${mount.mountPath}/`)).toBe(true);
      expect(mount.readOnly === true).toBe(c === sidecar);
    }
  });

  it('is locked down: non-root, read-only root, no capabilities, RuntimeDefault seccomp, no service account token', () => {
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const c of [batcher, sidecar]) {
      expect(c.securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(c.securityContext.capabilities.add).toBeUndefined();
    }
  });

  it('requests no more than the original chart, is limited to one core, and the sidecar asks for less', () => {
    const r = batcher.resources;
    expect(quantity(r.requests.memory)).toBeLessThanOrEqual(quantity('100Mi'));
    expect(quantity(r.requests.cpu)).toBeLessThanOrEqual(quantity('150m'));
    expect(quantity(r.limits.memory)).toBeLessThanOrEqual(quantity('250Mi'));
    expect(quantity(r.limits.cpu)).toBeLessThanOrEqual(quantity('1'));
    for (const k of ['requests', 'limits'] as const) {
      for (const res of ['cpu', 'memory'] as const) {
        expect(quantity(sidecar.resources[k][res])).toBeLessThan(quantity(batcher.resources[k][res]));
      }
    }
    // The V8 heap cap stays inside the memory limit.
    const heapMi = Number(/--max-old-space-size=(\d+)/.exec(envValue(batcher, 'NODE_OPTIONS') ?? '')?.[1]);
    expect(heapMi * 2 ** 20).toBeLessThan(quantity(r.limits.memory));
  });

  it('CSM overlay: services namespace, in-cluster CFS URL, CA bundle from cray-configmap-ca-public-key at /mnt/ca-vol', () => {
    for (const o of csm) expect(o.metadata.namespace).toBe('services');
    const vol = spec.volumes.find(
      (v: { configMap?: { name: string } }) => v.configMap?.name === 'cray-configmap-ca-public-key',
    );
    expect(vol).toBeDefined();
    for (const c of [batcher, sidecar]) {
      expect(envValue(c, 'CFS_API_URL')).toBe('http://cray-cfs-api/v3');
      const mount = c.volumeMounts.find((m: { name: string }) => m.name === vol.name);
      expect(mount).toMatchObject({ mountPath: '/mnt/ca-vol', readOnly: true });
      expect(envValue(c, 'CA_CERT')).toBe('/mnt/ca-vol/certificate_authority.crt');
    }
  });

  it('OTel wiring: a service name per container and the pod identity from the downward API', () => {
    expect(envValue(batcher, 'OTEL_SERVICE_NAME')).toBe('cfs-batcher');
    expect(envValue(sidecar, 'OTEL_SERVICE_NAME')).toBe('cfs-batcher-health');
    for (const c of [batcher, sidecar]) {
      const byName = Object.fromEntries((c.env as Array<{ name: string }>).map((e) => [e.name, e]));
      expect(byName.POD_NAME).toMatchObject({ valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
      expect(byName.POD_NAMESPACE).toMatchObject({ valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
      expect(envValue(c, 'CONTAINER_NAME')).toBe(c.name);
      expect(c.envFrom[0].configMapRef.name).toMatch(/^cfs-batcher-otel/);
    }
    const cm = csm.find((o) => o.kind === 'ConfigMap' && o.metadata.name === batcher.envFrom[0].configMapRef.name)!;
    // Tracing is off as shipped (CSM has no collector): an overlay that has one merges the endpoint in.
    expect(cm.data.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(cm.data).toMatchObject({ OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' });
  });

  it('the Service and the PodMonitor reach both metrics ports by container port name', () => {
    const names = new Map<string, number>();
    for (const c of [batcher, sidecar]) for (const p of c.ports) names.set(p.name, p.containerPort);
    expect(names.get('metrics')).toBe(Number(envValue(batcher, 'METRICS_PORT')));
    expect(names.get('health')).toBe(Number(envValue(sidecar, 'HEALTH_PORT')));
    const svc = find(csm, 'Service');
    expect(svc.spec.ports.map((p: { targetPort: string }) => p.targetPort).sort()).toEqual(['health', 'metrics']);
    const pm = find(csm, 'PodMonitor');
    expect(pm.spec.podMetricsEndpoints.map((e: { port: string }) => e.port).sort()).toEqual(['health', 'metrics']);
    const labels = deploy.spec.template.metadata.labels;
    for (const sel of [svc.spec.selector, pm.spec.selector.matchLabels]) expect(labels).toMatchObject(sel);
  });
});
