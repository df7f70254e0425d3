/**
 * Each image's ENTRYPOINT, run from the repository root (the image's WORKDIR) without a docker engine, does its job:
 * the sidecar answers /healthz, the batcher beats against an in-process simulator and logs JSON lines only, and both
 * stop on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/wait';
import { entrypointOf as entrypointIn } from '../../scripts/src/dockerfile';
import { ROOT } from './manifest-helpers';

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
    // Whatever the runtime says on stderr in plain text (a warning about a flag or a deprecated API) would be a line
    // of the container log that is not JSON.
    expect(stderr.join('')).toBe('');
    const notJson = stdout
      .join('')
      .split('\n')
      .filter((l) => l !== '' && !isJsonObject(l));
    expect(notJson).toEqual([]);
  });
});
