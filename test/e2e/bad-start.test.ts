/**
 * Bad input at start, on the built programs as processes: a mistyped variable or log level is refused with the
 * setting it was meant to be, Kubernetes service links are not, a CFS_API_URL without /v3 is caught by its probe
 * (fatal only when base + /v3 answers), the route label is the path really requested, every start-up failure is
 * one JSON ERROR line (a busy port names its setting), and `--help` / a bad command behave on every program.
 */
import net from 'node:net';
import path from 'node:path';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { requireBuilt } from '../helpers/built';
import { request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { killAll, spawnNode, type LogLine, type Proc } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';

const [BATCHER, SIDECAR, SIM] = ['batcher/dist/main.js', 'sidecar-health/dist/main.js', 'cfs-sim/dist/main.js'];
requireBuilt(BATCHER, SIDECAR, SIM);

const tmp = makeTempDir('bad-start');
let sim: Simulator;
let origin: string;

beforeAll(async () => {
  setLogSilent(true);
  sim = createSimulator();
  sim.state.options = { ...DEFAULT_OPTIONS };
  const { url } = await sim.listen(0);
  origin = new URL(url).origin;
});

afterEach(async () => {
  await killAll();
});

afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

let runs = 0;
function run(script: string, env: Record<string, string>, args: string[] = []): Proc {
  return spawnNode({ name: `${path.basename(path.dirname(path.dirname(script)))}-${++runs}`, script, args, env });
}

/** A heartbeat file of its own for each batcher run. */
let heartbeats = 0;
const batcherEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  CFS_API_URL: `${origin}/v3`,
  HEARTBEAT_PATH: path.join(tmp.dir, `hb-${++heartbeats}.json`),
  METRICS_PORT: '0',
  CFS_RETRY_BUDGET_MS: '0',
  ...extra,
});

const waitOpts = (what: string, p: Proc) => ({
  timeoutMs: 20_000,
  intervalMs: 50,
  what,
  abort: () => (p.alive ? null : `${p.name} exited:\n${p.tail()}`),
});

/** Waits until the batcher started with `env` has written a heartbeat past its first cycle. */
async function cycled(p: Proc, env: Record<string, string>): Promise<void> {
  await waitFor(
    async () => {
      const r = await readHeartbeat(env.HEARTBEAT_PATH!);
      return r.ok && r.heartbeat.cycle >= 1;
    },
    waitOpts('a completed cycle', p),
  );
}

const sidecarEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  HEARTBEAT_PATH: path.join(tmp.dir, 'sidecar-hb.json'),
  HEALTH_HOST: '127.0.0.1',
  HEALTH_PORT: '0',
  SIDECAR_CFS_POLL_SECONDS: '0',
  CFS_API_URL: 'http://127.0.0.1:1/v3',
  ...extra,
});

const errors = (p: Proc): string[] =>
  p.lines.filter((l) => l.json?.level === 'ERROR').map((l) => String(l.json?.message));
const notJson = (p: Proc): LogLine[] => p.lines.filter((l) => l.json === undefined && l.text.trim() !== '');

/** Runs to exit: the exit code, its ERROR lines, and every line that is not a JSON log line. */
async function exitOf(p: Proc): Promise<{ code: number | null; errors: string[]; plain: string[] }> {
  const exit = await p.waitForExit(20_000);
  return { code: exit.code, errors: errors(p), plain: notJson(p).map((l) => l.text) };
}

/** A listening socket holding a port on all interfaces. */
async function occupy(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('a mistyped variable or log level is refused at start', () => {
  test.each([
    ['CFS_REQUEST_TIMEOUT_MSS', 'CFS_REQUEST_TIMEOUT_MS'],
    ['BATCHER_PAGE_SIZ', 'BATCHER_PAGE_SIZE'],
    ['cfs_api_url', 'CFS_API_URL'],
  ])('batcher: %s exits 2 naming %s', async (typo, meant) => {
    const r = await exitOf(run(BATCHER, batcherEnv({ [typo]: '5' })));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([expect.stringMatching(/^Configuration error: /)]);
    expect(r.errors[0]).toContain(`${typo} is not a batcher setting (did you mean ${meant}?)`);
    expect(r.plain).toEqual([]);
  });

  test('sidecar: SIDECAR_FRESHNES_SECONDS exits 2 naming SIDECAR_FRESHNESS_SECONDS', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ SIDECAR_FRESHNES_SECONDS: '30' })));
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toContain(
      'SIDECAR_FRESHNES_SECONDS is not a sidecar setting (did you mean SIDECAR_FRESHNESS_SECONDS?)',
    );
  });

  test('sidecar check: the same typo exits 2, not 1 (which means unhealthy)', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ SIDECAR_FRESHNES_SECONDS: '30' }), ['check', '--standalone']));
    expect(r.code).toBe(2);
    expect(r.errors[0]).toContain('did you mean SIDECAR_FRESHNESS_SECONDS?');
  });

  const allowed = 'is not a log level (one of DEBUG, INFO, WARNING, ERROR)';
  test('batcher: STARTING_CFS_LOG_LEVEL=verbose exits 2 naming the variable and the levels', async () => {
    const r = await exitOf(run(BATCHER, batcherEnv({ STARTING_CFS_LOG_LEVEL: 'verbose' })));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([`Configuration error: STARTING_CFS_LOG_LEVEL="verbose" ${allowed}`]);
  });

  test('sidecar: LOG_LEVEL=verbose exits 2', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv({ LOG_LEVEL: 'verbose' })));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([`Configuration error: LOG_LEVEL="verbose" ${allowed}`]);
  });

  test('simulator: LOG_LEVEL=verbose exits 2', async () => {
    const r = await exitOf(run(SIM, { LOG_LEVEL: 'verbose' }, ['--port', '0']));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([`Configuration error: LOG_LEVEL="verbose" ${allowed}`]);
  });

  test('a level in another case or an alias the logger knows (warn) is accepted', async () => {
    const env = batcherEnv({ STARTING_CFS_LOG_LEVEL: 'warn' });
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(errors(p)).toEqual([]);
  });
});

/** Kubernetes service links as a CSM namespace injects them (a Service cfs-batcher and cfs-ara, named ports too). */
const SERVICE_LINKS: Record<string, string> = {
  CFS_BATCHER_SERVICE_HOST: '10.16.0.10',
  CFS_BATCHER_SERVICE_PORT: '9088',
  CFS_BATCHER_SERVICE_PORT_METRICS: '9088',
  CFS_BATCHER_PORT: 'tcp://10.16.0.10:9088',
  CFS_BATCHER_PORT_9088_TCP: 'tcp://10.16.0.10:9088',
  CFS_BATCHER_PORT_9088_TCP_PROTO: 'tcp',
  CFS_BATCHER_PORT_9088_TCP_PORT: '9088',
  CFS_BATCHER_PORT_9088_TCP_ADDR: '10.16.0.10',
  CFS_ARA_SERVICE_HOST: '10.16.0.11',
  CFS_ARA_PORT_80_TCP: 'tcp://10.16.0.11:80',
  SIDECAR_HEALTH_SERVICE_HOST: '10.16.0.12',
  HEALTH_CHECK_PORT_8081_UDP_ADDR: '10.16.0.13',
};

describe('service links never warn or fail', () => {
  test('batcher runs its loop with them set, with no WARNING or ERROR line', async () => {
    const env = batcherEnv(SERVICE_LINKS);
    const p = run(BATCHER, env);
    await cycled(p, env);
    expect(p.lines.filter((l) => l.json?.level === 'WARNING' || l.json?.level === 'ERROR')).toEqual([]);
  });

  test('sidecar serves with them set, with no WARNING or ERROR line', async () => {
    const p = run(SIDECAR, sidecarEnv(SERVICE_LINKS));
    await p.waitForLine(/Health sidecar listening on/, 20_000);
    expect(p.lines.filter((l) => l.json?.level === 'WARNING' || l.json?.level === 'ERROR')).toEqual([]);
  });
});

describe('CFS_API_URL is probed at start', () => {
  test('a base without /v3 where base + /v3 answers: exit 2 naming the variable and the fix', async () => {
    const r = await exitOf(run(BATCHER, batcherEnv({ CFS_API_URL: origin })));
    expect(r.code).toBe(2);
    // The probe runs beside the loop, so the loop's own first 404 may be logged before it: the last line says why.
    expect(r.errors.at(-1)).toBe(
      `Configuration error: CFS_API_URL=${origin} answers 404 for GET /options while ${origin}/v3 answers it: did you mean CFS_API_URL=${origin}/v3?`,
    );
    for (const e of r.errors.slice(0, -1)) expect(e).toMatch(/^Unexpected response from CFS: 404 from CFS for GET /);
  });

  test('a 404 with no v3 answer is one loud ERROR line, then the usual wait; the route label is what was sent', async () => {
    const metricsPort = await freePort();
    const base = `${origin}/apis/cfs/v3`;
    const p = run(BATCHER, batcherEnv({ CFS_API_URL: base, METRICS_PORT: String(metricsPort) }));
    const probe = await p.waitForLine(
      (l) => String(l.json?.message).startsWith(`CFS_API_URL=${base} answers 404`),
      20_000,
    );
    expect(probe.json).toMatchObject({ level: 'ERROR', setting: 'CFS_API_URL' });
    expect(String(probe.json?.message)).toContain('is it the CFS v3 API');
    // still waiting for CFS two cycles later: not fatal, liveness untouched
    await waitFor(
      () => p.find((l) => l.json?.message === 'Waiting for CFS to become available', probe.at).length >= 2,
      waitOpts('two waits after the probe', p),
    );
    expect(p.alive).toBe(true);
    const sent = p.find((l) => l.json?.status === 404 && typeof l.json.route === 'string').map((l) => l.json?.route);
    expect(sent.length).toBeGreaterThan(0);
    for (const route of sent) expect(String(route)).toMatch(/^\/apis\/cfs\/v3\//);
    const metrics = await request(`http://127.0.0.1:${metricsPort}/metrics`);
    const text = 'text' in metrics ? metrics.text : '';
    expect(text).toMatch(/cfs_batcher_cfs_requests_total\{[^}]*route="\/apis\/cfs\/v3\/sessions"/);
    expect(text).not.toMatch(/route="\/v3\//);
  });

  test('a CFS that is down at start: a warning for a base without /v3, no exit', async () => {
    const closed = await freePort();
    const base = `http://127.0.0.1:${closed}/apis/cfs`;
    const p = run(BATCHER, batcherEnv({ CFS_API_URL: base }));
    const warn = await p.waitForLine(
      (l) => String(l.json?.message).startsWith(`CFS_API_URL=${base} does not end`),
      20_000,
    );
    expect(warn.json?.level).toBe('WARNING');
    await waitFor(
      () => p.find((l) => l.json?.message === 'Waiting for CFS to become available', warn.at).length >= 2,
      waitOpts('two waits after the warning', p),
    );
    expect(p.alive).toBe(true);
    expect(p.find((l) => l.json?.route === '/apis/cfs/sessions').length).toBeGreaterThan(0);
  });
});

describe('start-up failures are one JSON ERROR line', () => {
  test('batcher: a bad value is a JSON line on stdout, nothing else', async () => {
    const p = run(BATCHER, batcherEnv({ METRICS_PORT: 'nine' }));
    const r = await exitOf(p);
    expect(r.code).toBe(2);
    expect(r.errors).toEqual(['Configuration error: METRICS_PORT="nine" is not an integer']);
    expect(r.plain).toEqual([]);
    expect(p.lines.filter((l) => l.stream === 'stderr')).toEqual([]);
  });

  test('batcher: a busy metrics port names METRICS_PORT', async () => {
    const busy = await occupy();
    try {
      const r = await exitOf(run(BATCHER, batcherEnv({ METRICS_PORT: String(busy.port) })));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 0.0.0.0:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set METRICS_PORT to a free port`,
      ]);
      expect(r.plain).toEqual([]);
    } finally {
      await busy.close();
    }
  });

  test('sidecar: a busy port names HEALTH_PORT', async () => {
    const busy = await occupy();
    try {
      const r = await exitOf(run(SIDECAR, sidecarEnv({ HEALTH_HOST: '0.0.0.0', HEALTH_PORT: String(busy.port) })));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 0.0.0.0:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set HEALTH_PORT to a free port`,
      ]);
    } finally {
      await busy.close();
    }
  });

  test('simulator: a busy port names --port', async () => {
    const busy = await occupy();
    try {
      const r = await exitOf(run(SIM, {}, ['--port', String(busy.port), '--host', '0.0.0.0', '--generate', '1']));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 0.0.0.0:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set --port to a free port`,
      ]);
    } finally {
      await busy.close();
    }
  });
});

describe('the command line', () => {
  test.each([
    [BATCHER, /^usage: main\.js \| main\.js --help$/m],
    [SIDECAR, /^usage: main\.js \[serve\] \| main\.js check \[live\|startup\] \[--standalone\] \| main\.js --help$/m],
    [SIM, /^usage: main\.js --port PORT .* \| --help$/m],
  ])('%s --help prints the usage and exits 0 without starting', async (script, usage) => {
    const env = script === BATCHER ? batcherEnv() : script === SIDECAR ? sidecarEnv() : {};
    const p = run(script, env, ['--help']);
    const r = await exitOf(p);
    expect(r.code).toBe(0);
    expect(r.plain.join('\n')).toMatch(usage);
    expect(p.lines.filter((l) => l.json !== undefined)).toEqual([]);
  });

  test('batcher: an unknown argument is refused (exit 2), not ignored', async () => {
    const r = await exitOf(run(BATCHER, batcherEnv(), ['--once']));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([expect.stringMatching(/^Configuration error: Unknown option '--once' \(usage: /)]);
  });

  test.each([[['check', 'bogus']], [['check', 'live', 'extra']], [['chek']], [['serve', '--standalone']]])(
    'sidecar %j is refused with the usage (exit 2)',
    async (args) => {
      const r = await exitOf(run(SIDECAR, sidecarEnv(), args));
      expect(r.code).toBe(2);
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatch(/^Configuration error: .*\(usage: main\.js \[serve\] \| main\.js check /);
    },
  );

  test('sidecar check live still judges (exit 1: no heartbeat), not refused', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv(), ['check', 'live', '--standalone']));
    expect(r.code).toBe(1);
    expect(r.errors).toEqual([]);
  });
});
