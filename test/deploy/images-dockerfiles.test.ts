/**
 * The Dockerfiles without a docker engine: multi-stage builds with production dependencies of their own workspace only,
 * every COPY source exists (in the build context, or after `npm run build` for the paths later stages take from the
 * build stage), .dockerignore does not hide a source, and each ENTRYPOINT is an exec form running the built program.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { entrypointOf as entrypointIn, nodeFlagsOf, parseDockerfile } from '../../scripts/src/dockerfile';
import { dockerIgnored, ignorePatterns } from './dockerignore';
import { ROOT } from './manifest-helpers';

const images = [
  {
    file: 'Dockerfile.batcher',
    entry: 'batcher/dist/main.js',
    workspace: 'batcher',
    mustNotShip: ['express-openapi-validator'],
  },
  {
    file: 'Dockerfile.sidecar',
    entry: 'sidecar-health/dist/main.js',
    workspace: 'sidecar-health',
    mustNotShip: ['express-openapi-validator'],
  },
];

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  link?: boolean;
  resolved?: string;
}

/** Pure: the package names a workspace's production install holds, walking package-lock.json from that workspace. */
function runtimeClosure(lock: { packages: Record<string, LockEntry> }, workspace: string): Set<string> {
  const seen = new Set<string>();
  const queue: [string, string][] = Object.keys(lock.packages[workspace]?.dependencies ?? {}).map((n) => [
    workspace,
    n,
  ]);
  for (let guard = 0; queue.length > 0 && guard < 100_000; guard++) {
    const [from, name] = queue.shift()!;
    // node's lookup: the nearest node_modules up from the requiring package
    let dir = from;
    let key: string | undefined;
    for (;;) {
      const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
      if (lock.packages[candidate]) {
        key = candidate;
        break;
      }
      if (dir === '') break;
      const i = dir.lastIndexOf('/node_modules/');
      dir = i < 0 ? '' : dir.slice(0, i);
    }
    if (!key || seen.has(key)) continue;
    seen.add(key);
    let entry = lock.packages[key]!;
    let at = key;
    if (entry.link && entry.resolved) {
      at = entry.resolved;
      entry = lock.packages[at] ?? {};
    }
    for (const n of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies }))
      queue.push([at, n]);
  }
  return new Set([...seen].map((k) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length)));
}

describe.each(images)('$file', ({ file, entry, workspace, mustNotShip }) => {
  const instructions = parseDockerfile(readFileSync(path.join(ROOT, file), 'utf8'));
  const froms = instructions.filter((i) => i.op === 'FROM');
  const entrypoint = entrypointIn(readFileSync(path.join(ROOT, file), 'utf8'), file);

  it('is multi-stage, installs with npm ci, keeps production dependencies only, runs as uid 65532', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const runs = instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /npm ci\b/.test(r) && !/--omit=dev/.test(r))).toBe(true);
    expect(runs.some((r) => /npm ci\b.*--omit=dev/.test(r))).toBe(true);
    const lastFrom = instructions.lastIndexOf(froms[froms.length - 1]!);
    const runtime = instructions.slice(lastFrom);
    expect(runtime.filter((i) => i.op === 'RUN')).toEqual([]); // no shell needed at run time
    expect(runtime.find((i) => i.op === 'USER')?.args).toBe('65532:65532');
    const args = Object.fromEntries(
      instructions.filter((i) => i.op === 'ARG').map((i) => i.args.split('=') as [string, string]),
    );
    expect(args.RUNTIME_IMAGE).toMatch(/distroless\/nodejs24/);
    expect(args.BUILD_IMAGE).toMatch(/^node:24/);
  });

  it("installs only its own workspace's runtime dependencies, which leave out the other programs' packages", () => {
    const prod = instructions.filter((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args));
    expect(prod.map((i) => i.args)).toEqual([expect.stringContaining(`--workspace=${workspace}`)]);
    const closure = runtimeClosure(JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')), workspace);
    expect(closure.has('@cfs-batcher/shared')).toBe(true);
    for (const name of ['@opentelemetry/sdk-node', 'axios', 'winston']) expect(closure.has(name)).toBe(true);
    expect(closure.has('express')).toBe(true); // both serve HTTP with it (the batcher: /metrics, /explain/{id})
    for (const name of [...mustNotShip, 'node', 'jest', 'typescript']) expect(closure.has(name)).toBe(false);
  });

  it('copies the package.json of every workspace before npm ci', () => {
    const rootPkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
    const firstCi = instructions.findIndex((i) => i.op === 'RUN' && /npm ci/.test(i.args));
    const copiedBefore = instructions
      .slice(0, firstCi)
      .filter((i) => i.op === 'COPY')
      .map((i) => i.args);
    for (const ws of rootPkg.workspaces) expect(copiedBefore).toContain(`${ws}/package.json ${ws}/`);
    expect(copiedBefore.some((a) => a.startsWith('package.json package-lock.json'))).toBe(true);
  });

  it('every COPY source exists (context sources now, build-stage outputs after npm run build) and is not dockerignored', () => {
    const missing: string[] = [];
    for (const i of instructions.filter((x) => x.op === 'COPY')) {
      const words = i.args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='));
      const paths = words.filter((w) => !w.startsWith('--'));
      const sources = paths.slice(0, -1);
      for (const src of sources) {
        const rel = from ? path.relative('/app', src) : src.replace(/\/$/, '');
        if (!existsSync(path.join(ROOT, rel))) missing.push(`${i.args} (${rel})`);
        if (!from && dockerIgnored(ignorePatterns, rel)) missing.push(`${rel} is excluded by .dockerignore`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has an exec-form ENTRYPOINT running the built program (node flags, if any, before it)', () => {
    expect(path.basename(entrypoint[0]!)).toBe('node');
    expect(entrypoint[1 + nodeFlagsOf(entrypoint, entry).length]).toBe(entry);
    expect(existsSync(path.join(ROOT, entry))).toBe(true);
  });
});
