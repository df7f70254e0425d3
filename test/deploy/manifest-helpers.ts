/** Shared by the deploy tests: render kustomizations, look objects up, parse quantities, find env names in sources. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = path.resolve(__dirname, '..', '..');
export const KUBECTL = process.env.KUBECTL ?? 'kubectl';
/** The two containers of the pod, as the Deployment names them. */
export const BATCHER = 'cfs-batcher';
export const SIDECAR = 'health-sidecar';

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered objects of every kind, read field by field
  [k: string]: any;
};

export function kustomizeDirs(): string[] {
  const overlays = path.join(ROOT, 'manifests', 'overlays');
  const dirs = ['manifests/base'];
  for (const d of readdirSync(overlays)) {
    if (statSync(path.join(overlays, d)).isDirectory()) dirs.push(`manifests/overlays/${d}`);
  }
  return dirs;
}

export function render(dir: string): K8sObject[] {
  const out = execFileSync(KUBECTL, ['kustomize', path.join(ROOT, dir)], { encoding: 'utf8', timeout: 60_000 });
  return parseAllDocuments(out).map((d) => {
    if (d.errors.length > 0) throw new Error(`${dir}: ${d.errors[0]?.message}`);
    return d.toJS() as K8sObject;
  });
}

export function find(objs: K8sObject[], kind: string, name?: string): K8sObject {
  const o = objs.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind}${name ? ` ${name}` : ''} rendered`);
  return o;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function container(deploy: K8sObject, name: string): any {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const c = (deploy.spec.template.spec.containers as any[]).find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function envValue(c: any, name: string): string | undefined {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (c.env as any[] | undefined)?.find((e) => e.name === name)?.value;
}

/** Kubernetes quantity -> number (cores for cpu, bytes for memory); the scripts read manifests with the same one. */
export { quantity } from '../../scripts/src/quantity';

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/**
 * Env var names a package's sources read directly: env['X'], env.X, process.env.X. The programs' settings are in
 * their settings schemas (BATCHER_SETTINGS, SIDECAR_SETTINGS), not found here.
 */
export function envNamesReadBy(...srcDirs: string[]): Set<string> {
  const names = new Set<string>();
  const patterns = [
    /\benv\w*\(\s*\w+\s*,\s*['"]([A-Z][A-Z0-9_]*)['"]/g,
    /\benv\s*\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]/g,
    /\b(?:process\.)?env\??\.([A-Z][A-Z0-9_]*)\b/g,
  ];
  for (const dir of srcDirs) {
    for (const file of walk(path.join(ROOT, dir))) {
      const text = readFileSync(file, 'utf8');
      for (const re of patterns) for (const m of text.matchAll(re)) names.add(m[1] as string);
    }
  }
  return names;
}
