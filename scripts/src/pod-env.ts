/**
 * Builds a local process environment from a manifest container, the way the kubelet would (literal values,
 * downward-API fields, `$(VAR)` references), then applies the few local overrides (URLs, paths, ports).
 */
import path from 'node:path';
import type { ContainerLaunch } from './pod';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, type ContainerSpec, type PodSpec } from './pod-spec';

export interface LocalPodIdentity {
  podName: string;
  namespace: string;
}

/** Pure: kubelet-style `$(VAR)` expansion against the variables defined so far; `$$(VAR)` escapes. */
export function expandVars(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) => {
    if (m === '$$') return '$';
    return name !== undefined && vars[name] !== undefined ? vars[name] : m;
  });
}

function fieldValue(fieldPath: string, id: LocalPodIdentity): string {
  switch (fieldPath) {
    case 'metadata.name':
      return id.podName;
    case 'metadata.namespace':
      return id.namespace;
    case 'spec.nodeName':
      return 'localhost';
    case 'status.podIP':
    case 'status.hostIP':
      return '127.0.0.1';
    default:
      return '';
  }
}

/**
 * Pure. `overrides` win over the manifest; a value of `undefined` removes the variable (e.g. CA_CERT, whose file
 * only exists in the cluster). `inherit` lists host variables passed through (PATH, HOME).
 */
export function containerEnv(
  c: ContainerSpec,
  id: LocalPodIdentity,
  overrides: Record<string, string | undefined>,
  host: NodeJS.ProcessEnv,
  inherit: readonly string[] = ['PATH', 'HOME', 'TMPDIR', 'LANG'],
): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const name of inherit) {
    const v = host[name];
    if (v !== undefined) vars[name] = v;
  }
  // The kubelet resolves env in manifest order; fieldRefs are known up front.
  for (const f of c.fieldRefs) vars[f.name] = fieldValue(f.fieldPath, id);
  for (const e of c.env) vars[e.name] = expandVars(e.value, vars);
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete vars[k];
    else vars[k] = v;
  }
  return vars;
}

/** Pure: the manifest's literal value for `name`, if any. */
export function manifestEnv(c: ContainerSpec, name: string): string | undefined {
  return c.env.find((e) => e.name === name)?.value;
}

/** Per-container overrides of `manifestContainers`, on top of the `local` ones both containers get. */
export interface ManifestOverrides {
  id: LocalPodIdentity;
  local: Record<string, string | undefined>;
  batcher?: Record<string, string | undefined>;
  sidecar?: Record<string, string | undefined>;
  /** The batcher's entry (default batcher/dist/main.js), run by plain node as the image runs it. */
  batcherArgs?: string[];
  /** See ContainerLaunch.prefix. */
  batcherPrefix?: string[];
  sidecarPrefix?: string[];
}

/**
 * The sidecar and the batcher as the manifest runs them (env, probes), for the pod assembler. The cluster-only
 * CA_CERT and the OTLP endpoint are dropped unless `local` sets them.
 */
export function manifestContainers(spec: PodSpec, o: ManifestOverrides): ContainerLaunch[] {
  const root = path.resolve(__dirname, '..', '..');
  const local = { CA_CERT: undefined, OTEL_EXPORTER_OTLP_ENDPOINT: undefined, ...o.local };
  const b = spec.containers[BATCHER_CONTAINER]!;
  const s = spec.containers[SIDECAR_CONTAINER]!;
  return [
    {
      name: SIDECAR_CONTAINER,
      nodeArgs: [path.join(root, 'sidecar-health/dist/main.js')],
      ...(o.sidecarPrefix ? { prefix: o.sidecarPrefix } : {}),
      env: containerEnv(s, o.id, { ...local, ...o.sidecar }, process.env),
      probes: s.probes,
    },
    {
      name: BATCHER_CONTAINER,
      nodeArgs: o.batcherArgs ?? [path.join(root, 'batcher/dist/main.js')],
      ...(o.batcherPrefix ? { prefix: o.batcherPrefix } : {}),
      env: containerEnv(b, o.id, { ...local, ...o.batcher }, process.env),
      probes: b.probes,
    },
  ];
}
