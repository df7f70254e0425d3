/** Spans per cycle and phase, a span per created session, errors recorded (in-memory exporter, no SDK). */
import { context, trace, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { captureLogs, putComponents, putConfig, startHarness, fastOptions, type Harness } from './harness';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();

let h: Harness;
let logs: ReturnType<typeof captureLogs>;

beforeAll(() => {
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});
beforeEach(() => {
  exporter.reset();
  logs = captureLogs();
});
afterEach(async () => {
  logs.stop();
  await h?.close();
});

it('a cycle is a root span with a child per phase and a span per created session', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1', 'x2']);
    },
  });
  await h.batcher.runCycle();
  h.clock.advance(1);
  await h.batcher.runCycle();
  const spans = exporter.getFinishedSpans();
  const byName = (n: string) => spans.filter((s) => s.name === n);
  expect(byName('batcher.rebuild_state')).toHaveLength(1);
  const cycles = byName('batcher.cycle');
  expect(cycles).toHaveLength(2);
  for (const c of cycles) expect(c.parentSpanContext).toBeUndefined();
  const second = cycles[1]!;
  const children = spans.filter((s) => s.parentSpanContext?.spanId === second.spanContext().spanId).map((s) => s.name);
  expect(children).toEqual(['batcher.options', 'batcher.check_sessions', 'batcher.collect', 'batcher.send']);
  const [create] = byName('batcher.session.create');
  expect(create).toBeDefined();
  const send = byName('batcher.send')[1]!;
  expect(create!.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
  expect(create!.attributes).toMatchObject({
    'cfs.configuration.name': 'cfg',
    'cfs.batch.size': 2,
    'cfs.session.limit': '0',
  });
  expect(String(create!.attributes['cfs.session.name'])).toMatch(/^batcher-/);
});

it('a failed phase records the exception with ERROR status', async () => {
  h = await startHarness({ seed: (sim) => putConfig(sim) });
  h.sim.faults.add({ match: 'GET /v3/options', action: { type: 'status', status: 503 } });
  await h.batcher.runCycle();
  const options = exporter.getFinishedSpans().find((s) => s.name === 'batcher.options')!;
  expect(options.status.code).toBe(SpanStatusCode.ERROR);
  expect(options.events.some((e) => e.name === 'exception')).toBe(true);
  expect(exporter.getFinishedSpans().find((s) => s.name === 'batcher.cycle')!.status.code).toBe(SpanStatusCode.ERROR);
});
