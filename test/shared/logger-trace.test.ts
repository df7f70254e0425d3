/** The logger's trace context: a line written inside an active span carries its trace and span ids. */
import { INVALID_SPAN_CONTEXT, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { captureLogLines, last, log, parsed } from './log-capture';

captureLogLines();

describe('trace context', () => {
  const provider = new BasicTracerProvider();
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  it('inside an active span the line carries its trace_id and span_id; outside it does not', async () => {
    const tracer = trace.getTracer('logger-test');
    let ids: { traceId: string; spanId: string } | undefined;
    await tracer.startActiveSpan('work', async (span) => {
      ids = span.spanContext();
      await Promise.resolve();
      log.info('Inside');
      span.end();
    });
    log.info('Outside');
    const [inside, outside] = parsed();
    expect(inside).toMatchObject({ trace_id: ids!.traceId, span_id: ids!.spanId });
    expect(inside!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(outside).not.toHaveProperty('trace_id');
    expect(outside).not.toHaveProperty('span_id');
  });

  it('an invalid span context gives no ids', () => {
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(INVALID_SPAN_CONTEXT)), () =>
      log.info('Invalid'),
    );
    expect(last()).not.toHaveProperty('trace_id');
  });
});
