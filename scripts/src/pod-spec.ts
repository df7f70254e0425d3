/**
 * Reads the pod the manifest really deploys (rendered by `kubectl kustomize`, or the base deployment.yaml when
 * kubectl is missing) so the local pod applies the same probes, env and grace periods as the cluster.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Limits } from './pod-limits';
import type { ContainerProbes, ProbeSpec } from './probe-spec';
import { quantity } from './quantity';

export const BATCHER_CONTAINER = 'cfs-batcher';
export const SIDECAR_CONTAINER = 'health-sidecar';

export interface ContainerSpec {
  name: string;
  /** Literal env values in manifest order; valueFrom entries are listed in `fieldRefs`. */
  env: Array<{ name: string; value: string }>;
  fieldRefs: Array<{ name: string; fieldPath: string }>;
  /** Named container ports. */
  ports: Record<string, number>;
  probes: ContainerProbes;
  /** `resources.limits` (CPUs, bytes): what the benches run the program under (pod-limits.ts). */
  limits: Limits;
}

export interface PodSpec {
  source: string;
  podTerminationGracePeriodSeconds: number;
  containers: Record<string, ContainerSpec>;
}

export class ManifestError extends Error {
  override name = 'ManifestError';
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown, fallback: number, where: string): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    throw new ManifestError(`${where} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

/** Pure: resolves a probe's port (number, or a name looked up in the probed container's ports like the kubelet does). */
function probeFrom(raw: unknown, ports: Record<string, number>, where: string): ProbeSpec | undefined {
  if (raw === undefined) return undefined;
  if (!isObj(raw) || !isObj(raw.httpGet)) throw new ManifestError(`${where}: only httpGet probes are supported`);
  const http = raw.httpGet;
  let port: number;
  if (typeof http.port === 'number') port = http.port;
  else if (typeof http.port === 'string' && ports[http.port] !== undefined) port = ports[http.port] as number;
  else
    throw new ManifestError(
      `${where}: port ${JSON.stringify(http.port)} is neither a number nor a port of this container`,
    );
  const spec: ProbeSpec = {
    path: typeof http.path === 'string' ? http.path : '/',
    port,
    initialDelaySeconds: num(raw.initialDelaySeconds, 0, `${where}.initialDelaySeconds`),
    periodSeconds: num(raw.periodSeconds, 10, `${where}.periodSeconds`),
    timeoutSeconds: num(raw.timeoutSeconds, 1, `${where}.timeoutSeconds`),
    failureThreshold: num(raw.failureThreshold, 3, `${where}.failureThreshold`),
    successThreshold: num(raw.successThreshold, 1, `${where}.successThreshold`),
  };
  if (raw.terminationGracePeriodSeconds !== undefined) {
    spec.terminationGracePeriodSeconds = num(
      raw.terminationGracePeriodSeconds,
      30,
      `${where}.terminationGracePeriodSeconds`,
    );
  }
  return spec;
}

function limitsOf(resources: unknown, where: string): Limits {
  const limits = isObj(resources) && isObj(resources.limits) ? resources.limits : {};
  const read = (v: unknown, what: string): number | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') throw new ManifestError(`${where}.${what} is not a quantity`);
    try {
      return quantity(v);
    } catch (err) {
      throw new ManifestError(`${where}.${what}: ${(err as Error).message}`);
    }
  };
  const cpus = read(limits.cpu, 'cpu');
  const memoryBytes = read(limits.memory, 'memory');
  return { ...(cpus !== undefined ? { cpus } : {}), ...(memoryBytes !== undefined ? { memoryBytes } : {}) };
}

/** Pure: extracts the pod from parsed manifest documents (the first Deployment named cfs-batcher). */
export function podSpecFromDocuments(docs: unknown[], source: string): PodSpec {
  const deployment = docs.find(
    (d) => isObj(d) && d.kind === 'Deployment' && isObj(d.metadata) && d.metadata.name === 'cfs-batcher',
  );
  if (!isObj(deployment)) throw new ManifestError(`${source}: no Deployment named cfs-batcher`);
  const podSpec = (deployment.spec as Obj | undefined)?.template as Obj | undefined;
  const spec = podSpec?.spec;
  if (!isObj(spec) || !Array.isArray(spec.containers))
    throw new ManifestError(`${source}: Deployment has no pod template containers`);
  const grace = num(spec.terminationGracePeriodSeconds, 30, 'terminationGracePeriodSeconds');
  const containers: Record<string, ContainerSpec> = {};
  for (const c of spec.containers as unknown[]) {
    if (!isObj(c) || typeof c.name !== 'string') throw new ManifestError(`${source}: a container has no name`);
    const ports: Record<string, number> = {};
    for (const p of (c.ports as unknown[] | undefined) ?? []) {
      if (isObj(p) && typeof p.name === 'string' && typeof p.containerPort === 'number')
        ports[p.name] = p.containerPort;
    }
    const env: ContainerSpec['env'] = [];
    const fieldRefs: ContainerSpec['fieldRefs'] = [];
    for (const e of (c.env as unknown[] | undefined) ?? []) {
      if (!isObj(e) || typeof e.name !== 'string') continue;
      if (typeof e.value === 'string') env.push({ name: e.name, value: e.value });
      const fieldPath = isObj(e.valueFrom) && isObj(e.valueFrom.fieldRef) ? e.valueFrom.fieldRef.fieldPath : undefined;
      if (typeof fieldPath === 'string') fieldRefs.push({ name: e.name, fieldPath });
    }
    const where = `${c.name}`;
    containers[c.name] = {
      name: c.name,
      env,
      fieldRefs,
      ports,
      limits: limitsOf(c.resources, `${where}.resources.limits`),
      probes: {
        startup: probeFrom(c.startupProbe, ports, `${where}.startupProbe`),
        liveness: probeFrom(c.livenessProbe, ports, `${where}.livenessProbe`),
        readiness: probeFrom(c.readinessProbe, ports, `${where}.readinessProbe`),
        podTerminationGracePeriodSeconds: grace,
      },
    };
  }
  for (const name of [BATCHER_CONTAINER, SIDECAR_CONTAINER]) {
    if (!containers[name]) throw new ManifestError(`${source}: no container named ${name}`);
  }
  return { source, podTerminationGracePeriodSeconds: grace, containers };
}

export function parseManifestText(text: string, source: string): PodSpec {
  const docs = parseAllDocuments(text).map((d) => {
    if (d.errors.length > 0) throw new ManifestError(`${source}: ${d.errors[0]?.message}`);
    return d.toJS() as unknown;
  });
  return podSpecFromDocuments(docs, source);
}

/** Renders manifests/base with kubectl when it exists; otherwise reads the base deployment.yaml. */
export function loadPodSpec(repoRoot: string, kubectl = 'kubectl'): PodSpec {
  const base = path.join(repoRoot, 'manifests', 'base');
  let rendered: string | null = null;
  try {
    rendered = execFileSync(kubectl, ['kustomize', base], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code !== 'ENOENT')
      throw new ManifestError(`kubectl kustomize ${base} failed: ${String(e.stderr ?? e.message).trim()}`);
  }
  if (rendered !== null) return parseManifestText(rendered, 'kubectl kustomize manifests/base');
  const file = path.join(base, 'deployment.yaml');
  return parseManifestText(readFileSync(file, 'utf8'), 'manifests/base/deployment.yaml');
}
