/**
 * The loop's one progress wire, createBatcher's: with a built port (as start.ts builds it) every HTTP attempt reaches
 * it, retries included, so a call that retries for its whole budget still shows a loop getting answers; the request
 * metrics count the same attempts. A ready-made port (a test's wrapper) reaches it once per call.
 */
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { CfsClient, setLogSilent, type RequestInfo } from '@cfs-batcher/shared';
import path from 'node:path';
import { createBatcher, DEFAULT_OPTIONS, type Batcher } from '@cfs-batcher/batcher';
import { makeTempDir } from '../helpers/tmp';
import { FakeClock, fastOptions, putComponents, putConfig, startHarness } from './harness';

setLogSilent(true);

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function simWithRefusals(times: number): Promise<string> {
  sim = createSimulator({ operator: { paused: true } });
  putConfig(sim);
  fastOptions(sim);
  // The options read is refused `times` times, then answered: one call, times + 1 attempts.
  sim.faults.add({ match: 'GET /v3/options', action: { type: 'status', status: 503 }, scope: { times } });
  return (await sim.listen(0)).url;
}

const clientOptions = (baseUrl: string) => ({
  baseUrl,
  retryBudgetMs: 60_000,
  requestTimeoutMs: 2000,
  connectTimeoutMs: 1000,
});

it('a built port: each attempt of a retried call is noted as it comes, and counted in the request metrics', async () => {
  const url = await simWithRefusals(3);
  const clock = new FakeClock();
  // [status, the loop's last CFS answer right after the wire saw the attempt] for each options attempt
  const seen: [string, number | null][] = [];
  const b: Batcher = createBatcher({
    client: (onRequest) =>
      new CfsClient({
        ...clientOptions(url),
        onRequest: (r: RequestInfo) => {
          clock.advance(1000);
          onRequest(r);
          if (r.route.endsWith('/options')) seen.push([r.status, b.state.creating.lastCfsAnswerAt]);
        },
      }),
    clock,
    sleep: async () => undefined,
  });
  const r = await b.runCycle();
  expect(r.outcome).toBe('ok');
  expect(seen.map(([status]) => status)).toEqual(['503', '503', '503', '200']);
  // every attempt moved the loop's progress on (the clock moved 1 s before each)
  const at = seen.map(([, t]) => t!);
  expect(at.every((t, i) => i === 0 || t - at[i - 1]! === 1000)).toBe(true);
  const m = await b.metrics.cfsRequests.get();
  const options = m.values.filter((v) => String(v.labels.route).endsWith('/options'));
  expect(options.find((v) => v.labels.status === '503')?.value).toBe(3);
  expect(options.find((v) => v.labels.status === '200')?.value).toBe(1);
});

it('a ready-made port: the same wire, once per call that got an answer', async () => {
  const url = await simWithRefusals(3);
  const clock = new FakeClock();
  const client = new CfsClient({ ...clientOptions(url), onRequest: () => clock.advance(1000) });
  const b = createBatcher({ client, clock, sleep: async () => undefined });
  expect(b.state.creating.lastCfsAnswerAt).toBeNull();
  const r = await b.runCycle();
  expect(r.outcome).toBe('ok');
  // noted when each call ended: the last one at the cycle's last request
  expect(b.state.creating.lastCfsAnswerAt).toBe(clock.now());
  // the wrapper sees calls, not attempts: the request metrics are the builder's (start.ts) to keep
  const m = await b.metrics.cfsRequests.get();
  expect(m.values).toEqual([]);
});

it("the harness's wire is its batcher's alone: an instance that stopped stamps nothing when another uses the client", async () => {
  const tmp = makeTempDir('progress-wire');
  // CSM's defaults (check interval 10 s, batch window 60 s); both instances share the heartbeat volume and CFS.
  const heartbeatPath = path.join(tmp.dir, 'heartbeat.json');
  const h = await startHarness({
    seed: (s) => {
      putConfig(s);
      putComponents(s, ['x1', 'x2']);
    },
    deps: { heartbeatPath },
  });
  try {
    expect((await h.batcher.runCycle()).outcome).toBe('ok');
    const dead = {
      sequence: h.batcher.heartbeat.lastSequence,
      answer: h.batcher.state.creating.lastCfsAnswerAt,
      requests: await requestCount(h.batcher),
    };
    expect(dead.requests).toBeGreaterThan(0); // its own attempts were counted
    // "SIGKILL": the first instance's loop is gone; a new one works through the same client, a minute later
    h.clock.advance(60_000);
    const next = createBatcher({ client: h.client, clock: h.clock, sleep: async () => undefined, heartbeatPath });
    expect((await next.runCycle()).outcome).toBe('ok');
    h.clock.advance(DEFAULT_OPTIONS.batch_window * 1000 + 1);
    expect((await next.runCycle()).outcome).toBe('ok');
    expect(next.state.creating.lastCfsAnswerAt).toBe(h.clock.now()); // the live loop's own wire saw its answers
    // the stopped loop: no progress, no stamp on the shared heartbeat file, no requests of someone else's counted
    expect(h.batcher.state.creating.lastCfsAnswerAt).toBe(dead.answer);
    expect(h.batcher.heartbeat.lastSequence).toBe(dead.sequence);
    expect(await requestCount(h.batcher)).toBe(dead.requests);
  } finally {
    await h.close();
    tmp.cleanup();
  }
});

async function requestCount(b: Batcher): Promise<number> {
  return (await b.metrics.cfsRequests.get()).values.reduce((n, v) => n + v.value, 0);
}
