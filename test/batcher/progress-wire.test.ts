/**
 * The loop's one progress wire, createBatcher's: with a built port (as start.ts builds it) every HTTP attempt reaches
 * it, retries included, so a call that retries for its whole budget still shows a loop getting answers; the request
 * metrics count the same attempts. A ready-made port (a test's wrapper) reaches it once per call.
 */
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { CfsClient, setLogSilent, type RequestInfo } from '@cfs-batcher/shared';
import { createBatcher, type Batcher } from '@cfs-batcher/batcher';
import { FakeClock, fastOptions, putConfig } from './harness';

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
