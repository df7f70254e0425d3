/**
 * The batcher's HTTP app over a harness batcher (its state, its fake clock, a lookup client on the simulator), and
 * `drive()`: a test that puts the real batcher into an explain state and checks the answer is in it. The coverage
 * test (explain-coverage.test.ts) reads the `drive(...)` calls of the explain test files and fails when a state or
 * reason docs/CONTRACTS.md lists has none. `memoryAsker()` and `hhmmss()` serve the tests that check an answer
 * comes from the batcher's memory and quote the times its sentence names.
 */
import request from 'supertest';
import type { Express } from 'express';
import {
  componentLookup,
  configurationLookup,
  createBatcherApp,
  createExplainer,
  explainLookupClient,
  type Batcher,
  type Explainer,
  type ExplainState,
  type HoldReason,
  type NotBatchedReason,
} from '@cfs-batcher/batcher';
import { count, type Harness } from './harness';

export interface Answer {
  status: number;
  body: Record<string, unknown> & { state?: string; reason?: string };
  headers: Record<string, string>;
}

export function explainApp(
  h: Harness,
  maxLookups = 4,
  batcher: Batcher = h.batcher,
): { app: Express; explainer: Explainer } {
  // The production lookup client over the harness's CFS settings (its retry budget included: the client drops it).
  const lookups = explainLookupClient(
    { baseUrl: h.url, retryBudgetMs: 30_000, requestTimeoutMs: 5000, connectTimeoutMs: 1000 },
    batcher.metrics,
  );
  const explainer = createExplainer({
    state: batcher.state,
    clock: h.clock,
    getComponent: componentLookup(lookups),
    getConfiguration: configurationLookup(lookups),
    maxLookups,
    cfsBaseUrl: h.url,
  });
  return { app: createBatcherApp(batcher.metrics.registry, explainer), explainer };
}

export async function ask(app: Express, id: string): Promise<Answer> {
  const r = await request(app).get(`/explain/${encodeURIComponent(id)}`);
  return { status: r.status, body: r.body as Answer['body'], headers: r.headers };
}

/** `hold.why` of a held answer, `why` of a not_batched one. */
export function whyOf(body: Answer['body']): string | undefined {
  const hold = body.hold as { why?: string } | undefined;
  return hold?.why ?? (body.why as string | undefined);
}

/**
 * A test named after the state (and reason) it drives the batcher into; the answer must be in that state, with
 * that reason, and JSON.
 */
export function drive(
  state: ExplainState,
  why: HoldReason | NotBatchedReason | null,
  title: string,
  run: () => Promise<Answer>,
): void {
  it(`${state}${why === null ? '' : `/${why}`}: ${title}`, async () => {
    const a = await run();
    expect(a.headers['content-type']).toMatch(/^application\/json/);
    expect(a.body.state).toBe(state);
    expect(a.status).toBe(state === 'unknown' ? 404 : 200);
    if (why !== null) expect(whyOf(a.body)).toBe(why);
    expect(typeof a.body.reason).toBe('string');
  });
}

/** `n` cycles of the harness's batcher (or `b`), the fake clock `stepMs` on before each. */
export async function cycles(h: Harness, n: number, b: Batcher = h.batcher, stepMs = 1000): Promise<void> {
  for (let i = 0; i < n; i++) {
    h.clock.advance(stepMs);
    await b.runCycle();
  }
}

/** "14:02:10 UTC" of a monotonic instant of the fake clock (its wall clock does not jump here). */
export const hhmmss = (t: number): string => `${new Date(t).toISOString().slice(11, 19)} UTC`;

const LOOKUP = 'GET /v3/components/{component_id}';

/**
 * `askMemory(id, b?)` over the running test's harness (`current()`) and its batcher (or `b`): asks about `id` and
 * checks that the memory answered (no CFS lookup).
 */
export function memoryAsker(current: () => Harness): (id: string, b?: Batcher) => Promise<Answer> {
  return async (id, b = current().batcher) => {
    const h = current();
    const before = count(h.sim, LOOKUP);
    const a = await ask(explainApp(h, 4, b).app, id);
    expect(count(h.sim, LOOKUP)).toBe(before);
    expect(a.body.source).toBe('batcher');
    return a;
  };
}
