/**
 * The built entry point as a child process against an in-process simulator: SIGTERM stops cleanly (exit 0, final
 * `stopping` heartbeat), fatal conditions exit non-zero after an ERROR line (crash-only).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { readHeartbeat, setLogSilent, type Heartbeat } from '@cfs-batcher/shared';
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';

const ROOT = path.resolve(__dirname, '..', '..');
const MAIN = path.join(ROOT, 'batcher', 'dist', 'main.js');
/** The same start() with the e2e faults around the phases (scripts/src/fixtures). */
const FAULTY = path.join(ROOT, 'scripts', 'dist', 'fixtures', 'faulty-batcher.js');

let sim: Simulator;
let url: string;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  setLogSilent(true);
  // build first (incremental: quick when up to date); scripts holds the fault fixture and builds the batcher too
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', path.join(ROOT, 'scripts')],
    { stdio: 'pipe' },
  );
}, 120_000);

beforeEach(async () => {
  sim = createSimulator();
  sim.state.putConfiguration({
    name: 'cfg',
    layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: 'a'.repeat(40), playbook: 'site.yml' }],
  });
  sim.state.options = { ...DEFAULT_OPTIONS };
  ({ url } = await sim.listen(0));
  dir = mkdtempSync(path.join(os.tmpdir(), 'batcher-proc-'));
});

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  out: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(env: Record<string, string>, entry = MAIN): Run {
  const child = spawn(process.execPath, [entry], {
    env: {
      PATH: process.env.PATH ?? '',
      OTEL_SDK_DISABLED: 'true',
      CFS_API_URL: url,
      HEARTBEAT_PATH: path.join(dir, 'hb.json'),
      METRICS_PORT: '0',
      CFS_RETRY_BUDGET_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, out: () => out, exited };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 10_000 && Date.now() < deadline; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const heartbeatIn = (phase: string) => async (): Promise<Heartbeat | undefined> => {
  const r = await readHeartbeat(path.join(dir, 'hb.json'));
  return r.ok && r.heartbeat.phase === phase ? r.heartbeat : undefined;
};

function jsonLines(out: string): Array<Record<string, unknown>> {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`no exit within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

it('SIGTERM while sleeping: final stopping heartbeat, exit 0', async () => {
  const run = start({});
  const hb = await waitFor('sleep heartbeat', heartbeatIn('sleep'));
  expect(hb.cycle).toBeGreaterThanOrEqual(1);
  run.child.kill('SIGTERM');
  const { code } = await withDeadline(run.exited, 5000);
  expect(code).toBe(0);
  const final = await readHeartbeat(path.join(dir, 'hb.json'));
  expect(final.ok && final.heartbeat.phase).toBe('stopping');
  const lines = jsonLines(run.out());
  expect(
    lines.some(
      (l) =>
        l.message === 'Rebuilt previous state.  Found 0 incomplete sessions/batches.' &&
        l.logger === 'batcher.batch' &&
        l.level === 'INFO',
    ),
  ).toBe(true);
});

it('SIGTERM during a hung CFS request aborts it and exits 0 within a few seconds', async () => {
  sim.faults.add({ match: 'GET /v3/options', action: { type: 'hang' } });
  const run = start({ CFS_REQUEST_TIMEOUT_MS: '60000' });
  await waitFor('options phase', heartbeatIn('options'));
  run.child.kill('SIGTERM');
  const { code } = await withDeadline(run.exited, 5000);
  expect(code).toBe(0);
  const final = await readHeartbeat(path.join(dir, 'hb.json'));
  expect(final.ok && final.heartbeat.phase).toBe('stopping');
});

it('a metrics port in use ends the batcher with one EADDRINUSE line naming the port, exit 1', async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '0.0.0.0', () => r()));
  try {
    const port = (blocker.address() as net.AddressInfo).port;
    const run = start({ METRICS_PORT: String(port) });
    const { code } = await withDeadline(run.exited, 10_000);
    expect(code).toBe(1);
    expect(run.out()).toContain(
      `Cannot listen on 0.0.0.0:${port}: EADDRINUSE, port ${port} is already in use; set METRICS_PORT to a free port`,
    );
    expect(run.out()).not.toContain('Unexpected error occurred');
  } finally {
    await new Promise<void>((r) => blocker.close(() => r()));
  }
});

it('a bad environment value exits 2 with one JSON ERROR line naming it (no stack, nothing else)', async () => {
  const run = start({ METRICS_PORT: 'nine' });
  const { code } = await withDeadline(run.exited, 10_000);
  expect(code).toBe(2);
  const plain = run
    .out()
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('{'));
  expect(plain).toEqual([]);
  const errors = jsonLines(run.out()).filter((l) => l.level === 'ERROR');
  expect(errors.map((l) => l.message)).toEqual(['Configuration error: METRICS_PORT="nine" is not an integer']);
  expect(run.out()).not.toContain('Unexpected error occurred');
});

it('a value out of range is a configuration error too', async () => {
  const run = start({ BATCHER_PENDING_SESSIONS_CAP: '-1' });
  const { code } = await withDeadline(run.exited, 10_000);
  expect(code).toBe(2);
  expect(run.out()).toContain('Configuration error: BATCHER_PENDING_SESSIONS_CAP=-1 is outside 0..100000');
});

it.each([
  ['throw', 'uncaughtException'],
  ['reject', 'unhandledRejection'],
])('test fault %s (%s) is logged with its stack and exits non-zero', async (fault, cause) => {
  const run = start({ BATCHER_TEST_FAULT: fault, BATCHER_TEST_FAULT_AFTER_CYCLES: '0' }, FAULTY);
  const { code } = await withDeadline(run.exited, 10_000);
  expect(code).not.toBe(0);
  const line = jsonLines(run.out()).find((l) => l.message === 'Unexpected error occurred');
  expect(line).toMatchObject({ level: 'ERROR', cause, logger: 'batcher.__main__' });
  expect(String(line?.stack)).toContain('TEST FAULT');
});
