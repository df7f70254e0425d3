/**
 * The kustomize manifests: every overlay renders, every object passes the Kubernetes schema, and the values the
 * design depends on (probes, thresholds, security, resources, ports, env names) hold in what is really applied.
 * Rendering is kubectl kustomize's: without kubectl every block is skipped and listed at the end of the run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import request from 'supertest';
import { setLogSilent } from '@cfs-batcher/shared';
import { createSidecar, configFromEnv } from '@cfs-batcher/sidecar-health';
import { loadPodSpec, podSpecFromDocuments } from '../../scripts/src/pod-spec';
import { describeWithTool } from '../helpers/requires';
import {
  container,
  envNamesReadBy,
  envValue,
  find,
  KUBECTL,
  kustomizeDirs,
  quantity,
  render,
  ROOT,
  type K8sObject,
} from './manifest-helpers';

const BATCHER = 'cfs-batcher';
const SIDECAR = 'health-sidecar';
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
        [BATCHER]: envNamesReadBy('batcher/src', 'shared/src'),
        [SIDECAR]: envNamesReadBy('sidecar-health/src', 'shared/src'),
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

describeWithTool(KUBECTL, 'monitoring is optional at apply time', () => {
  const CRD_GROUP = 'monitoring.coreos.com/';

  it('the base uses built-in kinds only, so it applies on a cluster without the prometheus-operator CRDs', () => {
    expect(base.map((o) => o.apiVersion).filter((v) => v !== 'v1' && v !== 'apps/v1')).toEqual([]);
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

  it('asks for no more than the original chart, and the sidecar for less than the batcher', () => {
    const r = batcher.resources;
    expect(quantity(r.requests.memory)).toBeLessThanOrEqual(quantity('100Mi'));
    expect(quantity(r.requests.cpu)).toBeLessThanOrEqual(quantity('150m'));
    expect(quantity(r.limits.memory)).toBeLessThanOrEqual(quantity('250Mi'));
    expect(quantity(r.limits.cpu)).toBeLessThanOrEqual(quantity('500m'));
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
    expect(cm.data.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^http:\/\/.+:4318$/);
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

describeWithTool(KUBECTL, 'probes and thresholds', () => {
  let deploy: K8sObject;
  let batcher: K8sObject;
  let sidecar: K8sObject;
  let healthPort: number;
  let live: K8sObject['spec'];
  let sideLive: K8sObject['spec'];
  beforeAll(() => {
    deploy = find(csm, 'Deployment', 'cfs-batcher');
    batcher = container(deploy, BATCHER);
    sidecar = container(deploy, SIDECAR);
    healthPort = Number(envValue(sidecar, 'HEALTH_PORT'));
    live = batcher.livenessProbe;
    sideLive = sidecar.livenessProbe;
  });

  it('the batcher is probed through the sidecar by numeric port', () => {
    expect(healthPort).toBe(8081);
    for (const [probe, path] of [
      ['startupProbe', '/startupz'],
      ['livenessProbe', '/livez'],
      ['readinessProbe', '/readyz'],
    ] as const) {
      expect(batcher[probe].httpGet).toEqual({ path, port: healthPort });
    }
    expect(sideLive.httpGet.path).toBe('/healthz');
  });

  it('liveness is sized for a starved node: timeout >= 2 s (a cached answer, p99 ~6 ms), failureThreshold >= 3, successThreshold 1', () => {
    for (const p of [live, batcher.startupProbe]) {
      expect(p.timeoutSeconds).toBeGreaterThanOrEqual(2);
      expect(p.successThreshold ?? 1).toBe(1);
    }
    expect(live.failureThreshold).toBeGreaterThanOrEqual(3);
  });

  it('a hung batcher is SIGKILLed within 30 s: T + e + f*p + t + g <= 30 s', () => {
    const T = Number(envValue(sidecar, 'SIDECAR_FRESHNESS_SECONDS'));
    const e = Number(envValue(sidecar, 'SIDECAR_EVAL_INTERVAL_MS')) / 1000;
    const worst =
      T + e + live.failureThreshold * live.periodSeconds + live.timeoutSeconds + live.terminationGracePeriodSeconds;
    expect(worst).toBeLessThanOrEqual(30);
    // ...and T stays above the worst beat gap measured (11.2 s, a CFS call hanging into its 10 s deadline).
    expect(T).toBeGreaterThanOrEqual(12);
    expect(live.terminationGracePeriodSeconds).toBeLessThan(deploy.spec.template.spec.terminationGracePeriodSeconds);
  });

  it('a sidecar restart cannot take the batcher down: (f-1)*p(batcher) > f*p + t + g(sidecar) + start-up', () => {
    const sidecarOutage =
      sideLive.failureThreshold * sideLive.periodSeconds +
      sideLive.timeoutSeconds +
      (sideLive.terminationGracePeriodSeconds ?? 30) +
      1;
    expect((live.failureThreshold - 1) * live.periodSeconds).toBeGreaterThan(sidecarOutage);
  });

  it('the startup probe outlasts the sidecar startup grace, and slow-CFS phases have budgets longer than a retried call', () => {
    const s = batcher.startupProbe;
    const grace = Number(envValue(sidecar, 'SIDECAR_STARTUP_GRACE_SECONDS'));
    expect(s.failureThreshold * s.periodSeconds).toBeGreaterThan(grace + s.periodSeconds);
    const budgets = Object.fromEntries(
      envValue(sidecar, 'SIDECAR_PHASE_BUDGETS')!
        .split(',')
        .map((kv) => kv.split('=') as [string, string]),
    );
    const slowestCallS =
      (Number(envValue(batcher, 'CFS_RETRY_BUDGET_MS')) + Number(envValue(batcher, 'CFS_REQUEST_TIMEOUT_MS'))) / 1000;
    for (const phase of ['options', 'check_status', 'collect', 'send', 'rebuild']) {
      expect(Number(budgets[phase])).toBeGreaterThan(slowestCallS);
    }
  });

  it('the manifest thresholds are accepted by the sidecar config', () => {
    const env = Object.fromEntries(
      (sidecar.env as Array<{ name: string; value?: string }>)
        .filter((e) => e.value !== undefined)
        .map((e) => [e.name, e.value]),
    );
    // The CA bundle and token are files mounted in the cluster; the config checks they are readable at start, so
    // here they are only required to be named.
    const fileVars = ['CA_CERT', 'CFS_TOKEN_FILE'].filter((v) => env[v] !== undefined);
    expect(fileVars).toContain('CA_CERT');
    for (const v of fileVars) delete env[v];
    const cfg = configFromEnv(env);
    expect(cfg.port).toBe(healthPort);
    expect(cfg.thresholds.freshnessMs).toBe(Number(env.SIDECAR_FRESHNESS_SECONDS) * 1000);
    expect(cfg.thresholds.startupGraceMs).toBe(Number(env.SIDECAR_STARTUP_GRACE_SECONDS) * 1000);
  });

  it('every probe path is a route the sidecar really serves', async () => {
    setLogSilent(true);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'probe-routes-'));
    const cfg = configFromEnv({ HEARTBEAT_PATH: path.join(dir, 'heartbeat.json'), SIDECAR_CFS_POLL_SECONDS: '0' });
    const sc = createSidecar(cfg, { cfsClient: null, defaultMetrics: false });
    await sc.refresh();
    const paths = [batcher.startupProbe, live, batcher.readinessProbe, sidecar.startupProbe, sideLive].map(
      (p) => p.httpGet.path,
    );
    for (const p of [...new Set(paths), '/metrics']) {
      const res = await request(sc.app).get(p);
      expect({ p, status: res.status }).toEqual({ p, status: expect.any(Number) });
      expect([200, 503]).toContain(res.status);
    }
    expect((await request(sc.app).get('/no-such-probe')).status).toBe(404);
    await sc.stop();
    rmSync(dir, { recursive: true, force: true });
    setLogSilent(false);
  });

  it('the local pod reads the same probes from the manifest', () => {
    const pod = loadPodSpec(ROOT);
    const fromCsm = podSpecFromDocuments(csm, 'csm');
    expect(pod.containers[BATCHER]!.probes).toEqual(fromCsm.containers[BATCHER]!.probes);
    expect(pod.containers[BATCHER]!.probes.liveness).toMatchObject({
      path: '/livez',
      port: 8081,
      periodSeconds: live.periodSeconds,
      terminationGracePeriodSeconds: 2,
    });
    // named port "health" resolved against the sidecar's own ports, as the kubelet does
    expect(pod.containers[SIDECAR]!.probes.liveness?.port).toBe(8081);
  });
});
