/**
 * Process level: the built sidecar and simulator end a bad start with one ERROR line and a known exit code
 * (configuration error: 2 and `Configuration error: VAR=...`; port in use: 1 and EADDRINUSE with the port and the
 * setting that chose it).
 */
import { existsSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { REPO_ROOT, killAll, spawnNode, type Proc } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';

const SIDECAR = 'sidecar-health/dist/main.js';
const SIM = 'cfs-sim/dist/main.js';
const built = [SIDECAR, SIM].every((p) => existsSync(path.join(REPO_ROOT, p)));
const tmp = makeTempDir('start-failures-');
const heartbeat = path.join(tmp.dir, 'heartbeat.json');

afterAll(async () => {
  await killAll();
  tmp.cleanup();
});

/** Run to exit; return the code and the ERROR lines. */
async function runToExit(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; errors: string[]; p: Proc }> {
  const p = spawnNode({ name: path.basename(path.dirname(path.dirname(script))), script, args, env });
  const exit = await p.waitForExit(20_000);
  const errors = p.lines.filter((l) => l.json?.level === 'ERROR').map((l) => String(l.json?.message));
  return { code: exit.code, errors, p };
}

/** A listening socket on 127.0.0.1 holding a port. */
async function occupy(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const sidecarEnv = (extra: Record<string, string>): Record<string, string> => ({
  HEARTBEAT_PATH: heartbeat,
  HEALTH_HOST: '127.0.0.1',
  HEALTH_PORT: '0',
  SIDECAR_CFS_POLL_SECONDS: '0',
  CFS_API_URL: 'http://127.0.0.1:1/v3',
  ...extra,
});

(built ? describe : describe.skip)('a bad start ends in one line', () => {
  const unreadable = path.join(tmp.dir, 'missing-token');
  const cases: [string, Record<string, string>, RegExp][] = [
    ['a non-integer', { HEALTH_PORT: 'eighty' }, /^Configuration error: HEALTH_PORT="eighty" is not an integer$/],
    [
      'an out-of-range number',
      { SIDECAR_CFS_POLL_SECONDS: '7200' },
      /^Configuration error: SIDECAR_CFS_POLL_SECONDS=7200 is outside 0\.\.3600$/,
    ],
    [
      'a CFS_API_URL that is not a URL',
      { CFS_API_URL: 'cray-cfs-api/v3' },
      /^Configuration error: CFS_API_URL="cray-cfs-api\/v3" is not a URL$/,
    ],
    [
      'a CFS_API_URL that is not http(s)',
      { CFS_API_URL: 'ftp://cfs/v3' },
      /^Configuration error: CFS_API_URL="ftp:\/\/cfs\/v3" is not an http or https URL$/,
    ],
    [
      'an unreadable CFS_TOKEN_FILE',
      { CFS_TOKEN_FILE: unreadable },
      /^Configuration error: CFS_TOKEN_FILE="\S+missing-token" cannot be read \(ENOENT\)$/,
    ],
    [
      'a bad phase budget',
      { SIDECAR_PHASE_BUDGETS: 'send=0' },
      /^Configuration error: SIDECAR_PHASE_BUDGETS="send=0": budget for send must be at least 1 s$/,
    ],
    ['an unreadable CA_CERT', { CA_CERT: tmp.dir }, /^Configuration error: CA_CERT="\S+" cannot be read \(EISDIR\)$/],
  ];

  test.each(cases)('sidecar: %s exits 2', async (_what, env, line) => {
    const r = await runToExit(SIDECAR, [], sidecarEnv(env));
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(line);
    expect(r.p.lines.some((l) => /Unexpected error|stack/i.test(l.text))).toBe(false);
  });

  test('sidecar check: a configuration error exits 2 too (not 1, which means unhealthy)', async () => {
    const r = await runToExit(SIDECAR, ['check', '--standalone'], sidecarEnv({ SIDECAR_FRESHNESS_SECONDS: '-5' }));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual(['Configuration error: SIDECAR_FRESHNESS_SECONDS=-5 is outside 1..86400']);
  });

  test('sidecar: a busy port is EADDRINUSE with the port, exit 1', async () => {
    writeFileSync(heartbeat, '');
    const busy = await occupy();
    try {
      const r = await runToExit(SIDECAR, [], sidecarEnv({ HEALTH_PORT: String(busy.port) }));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 127.0.0.1:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set HEALTH_PORT to a free port`,
      ]);
    } finally {
      await busy.close();
    }
  });

  test('simulator: a bad argument exits 2', async () => {
    const r = await runToExit(SIM, ['--port', '70000'], {});
    expect(r.code).toBe(2);
    expect(r.errors).toEqual(['Configuration error: --port=70000 is not an integer in 0..65535']);
  });

  test('simulator: a busy port is EADDRINUSE with the port, exit 1', async () => {
    const busy = await occupy();
    try {
      const r = await runToExit(SIM, ['--port', String(busy.port), '--generate', '3'], {});
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 127.0.0.1:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set --port to a free port`,
      ]);
    } finally {
      await busy.close();
    }
  });
});
