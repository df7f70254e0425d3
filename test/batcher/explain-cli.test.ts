/**
 * The explain command, spawned as an operator runs it in the batcher image (from the repository root, the image's
 * WORKDIR): the sentence and the details, and its exit codes (0 known, 1 unknown, 2 usage, 3 no answer).
 */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import path from 'node:path';
import { serveMetrics, serverPort } from '@cfs-batcher/batcher';
import { requireBuilt } from '../helpers/built';
import { freePort } from '../helpers/ports';
import { answerTimeoutMs, detailLines, exitCodeOf, parseExplainArgs } from '../../batcher/src/explain';
import { explainApp } from './explain-harness';
import { fastOptions, harnessLifecycle, putComponents, putConfig, startHarness, type Harness } from './harness';

const ROOT = path.join(__dirname, '..', '..');
const [SCRIPT] = requireBuilt('batcher/dist/explain.js');

let h: Harness;
harnessLifecycle(() => h);
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SCRIPT!, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function serve(): Promise<string> {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_window: 60, batch_size: 25 });
      putComponents(sim, ['x1000c0s0b0n0', 'x1000c0s1b0n0']);
    },
  });
  h.clock.advance(1000);
  await h.batcher.runCycle();
  server = await serveMetrics(h.batcher.metrics.registry, 0, '127.0.0.1', explainApp(h).explainer);
  return `http://127.0.0.1:${serverPort(server)}`;
}

it('known: the sentence first, then the details; exit 0', async () => {
  const url = await serve();
  const r = await run(['x1000c0s0b0n0', '--url', url]);
  expect(r.code).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(
    /^Waiting for batch cfg layer 0 \(l0\), 2 of 25 members; it is sent at \d\d:\d\d:\d\d UTC \(in 60 s\)/,
  );
  expect(lines).toContain('  state: waiting_for_batch');
  expect(lines).toContain('  batch.members: 2');
});

it('--json prints the answer as the server gave it; METRICS_PORT gives the default URL', async () => {
  const url = await serve();
  const r = await run(['x1000c0s1b0n0', '--json'], { METRICS_PORT: new URL(url).port });
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ id: 'x1000c0s1b0n0', state: 'waiting_for_batch' });
});

it('unknown: exit 1', async () => {
  const url = await serve();
  const r = await run(['x9999c0s0b0n0', `--url=${url}`]);
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/^Unknown: CFS has no component with this id/);
});

it.each([
  [[]],
  [['a', 'b']],
  [['x1/x2']],
  [['x1', '--url']],
  [['x1', '--url', 'ftp://h']],
  [['x1', '--bogus']],
  [['..']],
])('usage error %j: exit 2 and the usage line', async (args) => {
  const r = await run(args);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('usage: node batcher/dist/explain.js ID');
});

it('the batcher unreachable: exit 3, naming the URL', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const r = await run(['x1', '--url', url]);
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(`cannot reach the batcher at ${url}: ECONNREFUSED`);
});

describe('pure parts', () => {
  it('parses arguments; the default URL follows METRICS_PORT', () => {
    expect(parseExplainArgs(['x1'], {})).toEqual({ id: 'x1', url: 'http://127.0.0.1:9088', json: false });
    expect(parseExplainArgs(['x1'], { METRICS_PORT: '9100' })).toMatchObject({ url: 'http://127.0.0.1:9100' });
    expect(parseExplainArgs(['--url=http://h:1/', 'x1'], {})).toMatchObject({ url: 'http://h:1' });
    expect(parseExplainArgs(['x'.repeat(256)], {})).toEqual({ error: 'the id is longer than 255 characters' });
    // an id with a space is one CFS can hold: asked, not refused
    expect(parseExplainArgs(['x1 x2'], {})).toMatchObject({ id: 'x1 x2' });
  });

  it("waits longer than the batcher's CFS lookup may take (CFS_REQUEST_TIMEOUT_MS, as the container has it)", () => {
    expect(answerTimeoutMs({})).toBe(20_000);
    expect(answerTimeoutMs({ CFS_REQUEST_TIMEOUT_MS: '10000' })).toBe(20_000);
    expect(answerTimeoutMs({ CFS_REQUEST_TIMEOUT_MS: '60000' })).toBeGreaterThan(60_000);
    expect(answerTimeoutMs({ CFS_REQUEST_TIMEOUT_MS: 'soon' })).toBe(20_000);
  });

  it('flattens the details and maps answers to exit codes', () => {
    expect(detailLines({ id: 'x1', reason: 'r', hold: { why: 'pacing', next_attempt_at: null } })).toEqual([
      '  id: x1',
      '  hold.why: pacing',
      '  hold.next_attempt_at: null',
    ]);
    expect(exitCodeOf(200, {})).toBe(0);
    expect(exitCodeOf(404, { state: 'unknown' })).toBe(1);
    expect(exitCodeOf(404, { error: 'not_found' })).toBe(3);
    expect(exitCodeOf(400, {})).toBe(2);
    expect(exitCodeOf(503, { error: 'busy' })).toBe(3);
  });
});
