/**
 * The Dockerfiles without a docker engine: every COPY source exists (in the build context, or after `npm run build`
 * for the paths later stages take from the build stage), .dockerignore does not hide a source, and each ENTRYPOINT
 * starts from the repository root (the image's WORKDIR) and does its job.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/wait';
import { entrypointOf as entrypointIn, nodeFlagsOf, parseDockerfile } from '../../scripts/src/dockerfile';
import { ROOT } from './manifest-helpers';

/** Pure: does a .dockerignore pattern list exclude `rel`? (The subset of the syntax this repo uses.) */
export function dockerIgnored(patterns: string[], rel: string): boolean {
  let ignored = false;
  for (const p of patterns) {
    const negate = p.startsWith('!');
    const pat = negate ? p.slice(1) : p;
    const re = new RegExp(
      `^${pat
        .replace(/[.+^${}()|[\]]/g, '\\$&')
        .replace(/\*\*\//g, '(?:.*/)?')
        .replace(/\*/g, '[^/]*')}(?:/.*)?$`,
    );
    if (re.test(rel)) ignored = !negate;
  }
  return ignored;
}

const ignorePatterns = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

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
export function runtimeClosure(lock: { packages: Record<string, LockEntry> }, workspace: string): Set<string> {
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

function get(port: number, p: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** Spawns the image's ENTRYPOINT from the repo root; `node` (any path) becomes this Node binary. */
function spawnEntrypoint(entrypoint: string[], env: NodeJS.ProcessEnv, logs: string[]): ChildProcess {
  const [bin, ...args] = entrypoint;
  const cmd = path.basename(bin ?? '') === 'node' ? process.execPath : (bin as string);
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => logs.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
  return child;
}

function isJsonObject(line: string): boolean {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  // A deadline, not a timing check: only a program that ignores SIGTERM is still there (seen 10 s+ on a loaded machine).
  const t = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const code = await exited;
  clearTimeout(t);
  return code;
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

describe('ENTRYPOINTs start', () => {
  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  let sim: Simulator | null = null;
  afterEach(async () => {
    for (const c of children.splice(0)) await stopChild(c);
    if (sim) await sim.close();
    sim = null;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function entrypointOf(file: string): string[] {
    return entrypointIn(readFileSync(path.join(ROOT, file), 'utf8'), file);
  }

  it('the sidecar answers /healthz and stops on SIGTERM', async () => {
    const port = await freePort();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-entry-'));
    dirs.push(dir);
    const logs: string[] = [];
    const child = spawnEntrypoint(
      entrypointOf('Dockerfile.sidecar'),
      {
        HEALTH_PORT: String(port),
        HEARTBEAT_PATH: path.join(dir, 'heartbeat.json'),
        SIDECAR_CFS_POLL_SECONDS: '0',
        OTEL_SDK_DISABLED: 'true',
      },
      logs,
    );
    children.push(child);
    const status = await waitFor(async () => ((await get(port, '/healthz')) === 200 ? 200 : null), {
      what: 'sidecar /healthz',
      timeoutMs: 20_000,
      abort: () => (child.exitCode === null ? null : `sidecar exited ${child.exitCode}: ${logs.join('')}`),
    });
    expect(status).toBe(200);
    expect(await get(port, '/livez')).toEqual(expect.any(Number));
    children.pop();
    expect(await stopChild(child)).toBe(0);
  });

  it('the batcher writes a heartbeat against an in-process simulator, logs JSON lines only and stops on SIGTERM', async () => {
    sim = createSimulator({ scenario: path.join(ROOT, 'cfs-sim', 'scenarios', 'demo.json') });
    const { url } = await sim.listen(0, '127.0.0.1');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'batcher-entry-'));
    dirs.push(dir);
    const hbPath = path.join(dir, 'heartbeat.json');
    const logs: string[] = [];
    const child = spawnEntrypoint(
      entrypointOf('Dockerfile.batcher'),
      { CFS_API_URL: url, HEARTBEAT_PATH: hbPath, METRICS_PORT: '0', OTEL_SDK_DISABLED: 'true' },
      logs,
    );
    children.push(child);
    const stdout: string[] = [];
    const stderr: string[] = [];
    child.stdout?.on('data', (d: Buffer) => stdout.push(d.toString()));
    child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    const hb = await waitFor(
      async () => {
        const r = await readHeartbeat(hbPath);
        return r.ok && r.heartbeat.pid === child.pid && r.heartbeat.phase !== 'starting' ? r.heartbeat : null;
      },
      {
        what: 'a heartbeat from the batcher',
        timeoutMs: 30_000,
        abort: () =>
          child.exitCode === null ? null : `batcher exited ${child.exitCode}: ${logs.join('').slice(-2000)}`,
      },
    );
    expect(hb.pid).toBe(child.pid);
    children.pop();
    expect(await stopChild(child)).toBe(0);
    // A node or V8 flag the runtime dislikes says so on stderr in plain text (Node 20 with --lite-mode alone:
    // "Warning: disabling flag --expose_wasm due to conflicting flags"): the container log would hold a line that
    // is not JSON.
    expect(stderr.join('')).toBe('');
    const notJson = stdout
      .join('')
      .split('\n')
      .filter((l) => l !== '' && !isJsonObject(l));
    expect(notJson).toEqual([]);
  });
});

describe('dockerfile helpers', () => {
  it('parses continuations and skips comments', () => {
    expect(parseDockerfile('# c\nFROM a AS b\nRUN x \\\n  y\n')).toEqual([
      { op: 'FROM', args: 'a AS b' },
      { op: 'RUN', args: 'x y' },
    ]);
  });
  it('reads the node flags of an exec-form ENTRYPOINT and refuses a shell-form one', () => {
    const main = 'batcher/dist/main.js';
    expect(nodeFlagsOf(['/nodejs/bin/node', '--lite-mode', main, '--x'], main)).toEqual(['--lite-mode']);
    expect(nodeFlagsOf(['/nodejs/bin/node', main], main)).toEqual([]);
    expect(nodeFlagsOf(['node', '--require', 'x.js', main], main)).toEqual(['--require', 'x.js']);
    expect(() => nodeFlagsOf(['/usr/bin/tini', '--', 'node', main], main)).toThrow(/does not start with node/);
    expect(() => nodeFlagsOf(['node', 'other.js'], main)).toThrow(/does not run batcher/);
    expect(() => entrypointIn('FROM a\nENTRYPOINT node main.js\n', 'Dockerfile.x')).toThrow(
      /Dockerfile.x: no exec-form ENTRYPOINT/,
    );
    expect(entrypointIn('FROM a\nENTRYPOINT ["node", "a.js"]\nENTRYPOINT ["node", "b.js"]\n', 'D')).toEqual([
      'node',
      'b.js',
    ]);
  });
  it('.dockerignore is an allowlist: host builds, tests, the simulator and credential files stay out of the context', () => {
    for (const rel of [
      'node_modules',
      'shared/dist',
      '.npmrc',
      '.env',
      'test/deploy/images.test.ts',
      'docs',
      'cfs-sim/src/main.ts',
      'scripts',
    ]) {
      expect([rel, dockerIgnored(ignorePatterns, rel)]).toEqual([rel, true]);
    }
    expect(dockerIgnored(ignorePatterns, 'cfs-sim/package.json')).toBe(false);
  });
  it('applies .dockerignore patterns', () => {
    expect(dockerIgnored(['**/dist'], 'batcher/dist')).toBe(true);
    expect(dockerIgnored(['**/dist'], 'batcher/src')).toBe(false);
    expect(dockerIgnored(['test'], 'test/deploy/x.ts')).toBe(true);
    expect(dockerIgnored(['*.log', '!keep.log'], 'keep.log')).toBe(false);
  });
});
