/**
 * Manual spans through startTelemetry() with an in-memory exporter, inside jest: their parents, attributes and
 * resource, failures recorded on them, and the trace ids a log line carries (auto-instrumentation does nothing
 * under jest; traces-batcher-e2e.test.ts covers it, and tracing-bootstrap.test.ts what a fresh process loads,
 * exports and logs).
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ERROR_ATTR, addLogSink, getLogger, recordSpanError, withSpan, type Telemetry } from '@cfs-batcher/shared';
import { ATTR, SPAN, sessionSpanAttributes } from '@cfs-batcher/batcher';
import { startTelemetry } from '@cfs-batcher/shared/tracing';
import { waitFor } from '../helpers/wait';
import { quietLogs, restoreEnv, stopTelemetry } from './telemetry-lifecycle';

/** Collect JSON log lines through a log sink. */
function captureLogs(): { lines: Record<string, unknown>[]; stop: () => void } {
  const lines: Record<string, unknown>[] = [];
  const stop = addLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { lines, stop };
}

quietLogs();

describe('spans through startTelemetry', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;

  beforeAll(() => {
    process.env.POD_NAME = 'cfs-batcher-pod-1';
    process.env.POD_NAMESPACE = 'services';
    delete process.env.OTEL_SDK_DISABLED;
    telemetry = startTelemetry({
      serviceName: 'cfs-batcher',
      serviceVersion: '9.9.9',
      spanProcessors: [new SimpleSpanProcessor(exporter)],
      autoDetectResources: false,
    });
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await stopTelemetry(telemetry);
    restoreEnv();
  });

  test('a cycle has phase children and a session span with its attributes', async () => {
    expect(telemetry.enabled).toBe(true);
    const result = await withSpan(SPAN.cycle, { [ATTR.cycleSeq]: 7 }, async () => {
      await withSpan(SPAN.options, {}, () => undefined);
      await withSpan(SPAN.send, {}, () =>
        withSpan(
          SPAN.sessionCreate,
          sessionSpanAttributes({ name: 'batcher-1', configuration: 'cfg', batchSize: 2, limit: 'x1,x2' }),
          () => 'created',
        ),
      );
      return 42;
    });
    expect(result).toBe(42);
    const spans = exporter.getFinishedSpans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    const cycle = byName.get(SPAN.cycle);
    const send = byName.get(SPAN.send);
    const create = byName.get(SPAN.sessionCreate);
    expect(cycle && send && create && byName.get(SPAN.options)).toBeTruthy();
    expect(cycle!.parentSpanContext).toBeUndefined();
    expect(byName.get(SPAN.options)!.parentSpanContext?.spanId).toBe(cycle!.spanContext().spanId);
    expect(send!.parentSpanContext?.spanId).toBe(cycle!.spanContext().spanId);
    expect(create!.parentSpanContext?.spanId).toBe(send!.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(cycle!.attributes[ATTR.cycleSeq]).toBe(7);
    expect(create!.attributes).toMatchObject({
      'cfs.session.name': 'batcher-1',
      'cfs.configuration.name': 'cfg',
      'cfs.batch.size': 2,
      'cfs.session.limit': 'x1,x2',
    });
    expect(cycle!.resource.attributes).toMatchObject({
      'service.name': 'cfs-batcher',
      'service.version': '9.9.9',
      'k8s.pod.name': 'cfs-batcher-pod-1',
      'k8s.namespace.name': 'services',
    });
  });

  test('a failure is recorded as an exception with ERROR status and the CFS URL/status, and rethrown', async () => {
    const cfsError = Object.assign(new Error('Session batcher-x no longer exists'), {
      kind: 'http',
      status: 404,
      method: 'GET',
      url: 'http://127.0.0.1:1/v3/sessions/batcher-x',
      route: '/v3/sessions/{session_name}',
    });
    await expect(
      withSpan(SPAN.cycle, {}, () =>
        withSpan(SPAN.checkSessions, {}, () => {
          throw cfsError;
        }),
      ),
    ).rejects.toBe(cfsError);
    const check = exporter.getFinishedSpans().find((s) => s.name === SPAN.checkSessions)!;
    expect(check.status.code).toBe(SpanStatusCode.ERROR);
    expect(check.status.message).toBe('Session batcher-x no longer exists');
    expect(check.attributes[ERROR_ATTR.urlFull]).toBe('http://127.0.0.1:1/v3/sessions/batcher-x');
    expect(check.attributes[ERROR_ATTR.httpStatus]).toBe(404);
    expect(check.events.map((e) => e.name)).toContain('exception');
    const cycle = exporter.getFinishedSpans().find((s) => s.name === SPAN.cycle)!;
    expect(cycle.status.code).toBe(SpanStatusCode.ERROR);
  });

  test('recordSpanError accepts non-Error values', () => {
    const span = trace.getTracer('t').startSpan('manual');
    recordSpanError(span, 'plain string');
    span.end();
    const s = exporter.getFinishedSpans().find((x) => x.name === 'manual')!;
    expect(s.status).toEqual({ code: SpanStatusCode.ERROR, message: 'plain string' });
  });

  test('a log line written inside an active span carries its trace_id and span_id; outside it does not', async () => {
    const { lines, stop } = captureLogs();
    try {
      const logger = getLogger('batcher.batch');
      let ids: { traceId: string; spanId: string } | undefined;
      await withSpan(SPAN.collect, {}, (span) => {
        ids = span.spanContext();
        logger.info('Found 3 components that need updates');
      });
      logger.info('outside any span');
      await waitFor(() => lines.length >= 2, { what: 'two log lines', timeoutMs: 10_000, intervalMs: 20 });
      const inside = lines.find((l) => l.message === 'Found 3 components that need updates')!;
      expect(inside).toMatchObject({
        level: 'INFO',
        logger: 'batcher.batch',
        trace_id: ids!.traceId,
        span_id: ids!.spanId,
      });
      expect(typeof inside.timestamp).toBe('string');
      const outside = lines.find((l) => l.message === 'outside any span')!;
      expect(outside.trace_id).toBeUndefined();
    } finally {
      stop();
    }
  });

  test('a second startTelemetry returns the running instance', () => {
    expect(startTelemetry({ serviceName: 'other' })).toBe(telemetry);
  });
});
