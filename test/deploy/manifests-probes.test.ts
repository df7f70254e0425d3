/**
 * The probes and thresholds the CSM overlay renders: the batcher is probed through the sidecar, a hung batcher dies
 * within 30 s, a sidecar restart cannot take the batcher down, the sidecar accepts the thresholds and serves the probe
 * paths, and the local pod reads the same probes.
 * Rendering is kubectl kustomize's: without kubectl the block is skipped and listed at the end of the run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { setLogSilent } from '@cfs-batcher/shared';
import { EVAL_INTERVAL_MS, createSidecar, configFromEnv } from '@cfs-batcher/sidecar-health';
import { loadPodSpec, podSpecFromDocuments } from '../../scripts/src/pod-spec';
import { describeWithTool } from '../helpers/requires';
import { BATCHER, container, envValue, find, KUBECTL, render, ROOT, SIDECAR, type K8sObject } from './manifest-helpers';

// Rendered before the first test that runs (never while jest collects, so a machine without kubectl skips).
let csm: K8sObject[];
beforeAll(() => (csm = render('manifests/overlays/csm')));

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
    const e = EVAL_INTERVAL_MS / 1000;
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
