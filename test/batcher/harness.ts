/** In-process simulator + real CfsClient + a batcher on a fake clock, and a log capture. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { addLogSink, CfsClient, setLogSilent, type CfsClientOptions, type RequestInfo } from '@cfs-batcher/shared';
import { DEFAULT_OPTIONS, createBatcher, type Batcher, type BatcherDeps } from '@cfs-batcher/batcher';
import { COMMIT_A } from './fixtures';

export interface LogLine {
  level: string;
  logger?: string;
  message: string;
  [k: string]: unknown;
}

/** Captures every log line as parsed JSON (console output silenced). */
export function captureLogs(): {
  lines: LogLine[];
  stop: () => void;
  has: (msg: string | RegExp, level?: string) => boolean;
} {
  setLogSilent(true);
  const lines: LogLine[] = [];
  const stop = addLogSink((line) => lines.push(JSON.parse(line) as LogLine));
  const has = (msg: string | RegExp, level?: string) =>
    lines.some(
      (l) =>
        (typeof msg === 'string' ? l.message === msg : msg.test(l.message)) &&
        (level === undefined || l.level === level),
    );
  return { lines, stop, has };
}

/**
 * The per-test lifecycle the harness tests share: logs captured before each test; after it, the capture stopped,
 * mocks restored and the test's harness (`current()`) closed. The returned object reads the running test's capture.
 */
export function harnessLifecycle(current: () => Harness | undefined): ReturnType<typeof captureLogs> {
  let cap: ReturnType<typeof captureLogs> | undefined;
  beforeEach(() => {
    cap = captureLogs();
  });
  afterEach(async () => {
    cap?.stop();
    jest.restoreAllMocks();
    await current()?.close();
  });
  return {
    get lines() {
      return cap!.lines;
    },
    stop: () => cap?.stop(),
    has: (msg, level) => cap!.has(msg, level),
  };
}

/** Monotonic time `t`, and a wall clock that can jump (`wallOffset`) while monotonic time does not. */
export class FakeClock {
  t = 1_700_000_000_000;
  wallOffset = 0;
  now = (): number => this.t;
  wall = (): number => this.t + this.wallOffset;
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface Harness {
  sim: Simulator;
  url: string;
  client: CfsClient;
  clock: FakeClock;
  batcher: Batcher;
  close(): Promise<void>;
}

export async function startHarness(
  opts: {
    clientOptions?: Partial<CfsClientOptions>;
    deps?: Partial<BatcherDeps>;
    seed?: (sim: Simulator) => void;
    /** The fake clock advances by each CFS request's real duration (slow or hanging endpoints take fake time). */
    clockFollowsRequests?: boolean;
  } = {},
): Promise<Harness> {
  const sim = createSimulator({ operator: { paused: true } });
  opts.seed?.(sim);
  const { url } = await sim.listen(0);
  const clock = new FakeClock();
  // The batcher is wired as in production: its progress wire and request metrics see every HTTP attempt of this
  // client (a test that passes its own `deps.client` wrapper gets the per-call wire instead). Only the attempts of
  // its own cycles, as in production where no one else holds its client: another instance given `client` (a
  // restart), or a test reading CFS through it, is not this loop's progress.
  let loopHook: ((r: RequestInfo) => void) | undefined;
  const ownCalls = new AsyncLocalStorage<true>();
  const client = new CfsClient({
    baseUrl: url,
    retryBudgetMs: 0,
    requestTimeoutMs: 2000,
    connectTimeoutMs: 1000,
    ...opts.clientOptions,
    onRequest: (r) => {
      if (opts.clockFollowsRequests) clock.advance(r.durationMs);
      if (ownCalls.getStore()) loopHook?.(r);
    },
  });
  const port = (onRequest: (r: RequestInfo) => void): CfsClient => {
    loopHook = onRequest;
    return client;
  };
  const built = createBatcher({ client: port, clock, sleep: async () => undefined, random: () => 0.5, ...opts.deps });
  const batcher: Batcher = {
    ...built,
    runCycle: (signal) => ownCalls.run(true, () => built.runCycle(signal)),
    run: (signal) => ownCalls.run(true, () => built.run(signal)),
  };
  return { sim, url, client, clock, batcher, close: () => sim.close() };
}

/** A configuration with `layers` layers (all with commit + playbook). */
export function putConfig(sim: Simulator, name = 'cfg', layers = 1, commit = COMMIT_A): void {
  sim.state.putConfiguration({
    name,
    layers: Array.from({ length: layers }, (_, i) => ({
      name: `l${i}`,
      clone_url: `https://vcs/l${i}.git`,
      commit,
      playbook: 'site.yml',
    })),
  });
}

/** Options with no batch window (a batch is ready one tick after it forms), plus any overrides. */
export function fastOptions(sim: Simulator, extra: Record<string, unknown> = {}): void {
  sim.state.options = { ...DEFAULT_OPTIONS, batch_window: 0, ...extra };
}

export function putComponents(sim: Simulator, ids: string[], over: Record<string, unknown> = {}): void {
  for (const id of ids)
    sim.state.putComponent({ id, desired_config: 'cfg', enabled: true, error_count: 0, state: [], tags: {}, ...over });
}

export function ids(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
}

export function sessions(sim: Simulator) {
  return [...sim.state.sessions.values()];
}

export function count(sim: Simulator, key: string): number {
  return sim.stats.get(key);
}
