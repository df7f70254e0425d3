/**
 * The programs the bad-start tests run, as processes: the built batcher, sidecar and simulator, started with an
 * environment of their own against an in-process simulator, run to exit and read line by line. `origin` is set by
 * badStartLifecycle()'s beforeAll; ES module bindings are live, so the tests read the value it set.
 */
import net from 'node:net';
import path from 'node:path';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { DEFAULT_OPTIONS } from '@cfs-batcher/batcher';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { requireBuilt } from '../helpers/built';
import { killAll, spawnNode, type LogLine, type Proc } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';

export const [BATCHER, SIDECAR, SIM] = ['batcher/dist/main.js', 'sidecar-health/dist/main.js', 'cfs-sim/dist/main.js'];
requireBuilt(BATCHER, SIDECAR, SIM);

const tmp = makeTempDir('bad-start');
let sim: Simulator;
export let origin: string;

/** Starts the simulator the batchers talk to, stops every program after each test, and cleans up. */
export function badStartLifecycle(): void {
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
}

let runs = 0;
export function run(script: string, env: Record<string, string>, args: string[] = []): Proc {
  return spawnNode({ name: `${path.basename(path.dirname(path.dirname(script)))}-${++runs}`, script, args, env });
}

/** A heartbeat file of its own for each batcher run. */
let heartbeats = 0;
export const batcherEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  CFS_API_URL: `${origin}/v3`,
  HEARTBEAT_PATH: path.join(tmp.dir, `hb-${++heartbeats}.json`),
  METRICS_PORT: '0',
  CFS_RETRY_BUDGET_MS: '0',
  ...extra,
});

export const waitOpts = (what: string, p: Proc) => ({
  timeoutMs: 20_000,
  intervalMs: 50,
  what,
  abort: () => (p.alive ? null : `${p.name} exited:\n${p.tail()}`),
});

/** Waits until the batcher started with `env` has written a heartbeat past its first cycle. */
export async function cycled(p: Proc, env: Record<string, string>): Promise<void> {
  await waitFor(
    async () => {
      const r = await readHeartbeat(env.HEARTBEAT_PATH!);
      return r.ok && r.heartbeat.cycle >= 1;
    },
    waitOpts('a completed cycle', p),
  );
}

export const sidecarEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  HEARTBEAT_PATH: path.join(tmp.dir, 'sidecar-hb.json'),
  HEALTH_HOST: '127.0.0.1',
  HEALTH_PORT: '0',
  SIDECAR_CFS_POLL_SECONDS: '0',
  CFS_API_URL: 'http://127.0.0.1:1/v3',
  ...extra,
});

export const errors = (p: Proc): string[] =>
  p.lines.filter((l) => l.json?.level === 'ERROR').map((l) => String(l.json?.message));
const notJson = (p: Proc): LogLine[] => p.lines.filter((l) => l.json === undefined && l.text.trim() !== '');

/** Runs to exit: the exit code, its ERROR lines, and every line that is not a JSON log line. */
export async function exitOf(p: Proc): Promise<{ code: number | null; errors: string[]; plain: string[] }> {
  const exit = await p.waitForExit(20_000);
  return { code: exit.code, errors: errors(p), plain: notJson(p).map((l) => l.text) };
}

/** A listening socket holding a port on all interfaces. */
export async function occupy(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
