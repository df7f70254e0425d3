/**
 * telemetry.ts and the NodeSDK bootstrap inside jest: manual spans through startTelemetry() with an in-memory
 * exporter (auto-instrumentation does nothing under jest; traces-batcher-e2e.test.ts covers it, and
 * tracing-bootstrap.test.ts what a fresh process loads, exports and logs).
 */
import { SpanStatusCode, context, diag, propagation, trace } from '@opentelemetry/api';
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import {
  ERROR_ATTR,
  addLogSink,
  errorAttributes,
  getLogger,
  isUntracedPath,
  recordSpanError,
  setLogSilent,
  startTracing,
  telemetryDisabled,
  tracingEnabled,
  withSpan,
  type Telemetry,
} from '@cfs-batcher/shared';
import { ATTR, SPAN, sessionSpanAttributes } from '@cfs-batcher/batcher';
import { baseResourceAttributes, boundedShutdown, startTelemetry } from '@cfs-batcher/shared/tracing';
import { waitFor } from '../helpers/wait';

/** Collect JSON log lines through a log sink. */
function captureLogs(): { lines: Record<string, unknown>[]; stop: () => void } {
  const lines: Record<string, unknown>[] = [];
  const stop = addLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { lines, stop };
}

/** NodeSDK registers API globals that its shutdown leaves in place; clear them so the next test can start again. */
async function stopTelemetry(t: Telemetry): Promise<void> {
  await t.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
  diag.disable();
}

// keep the console quiet; captureLogs() sinks still receive every line
beforeAll(() => setLogSilent(true));
afterAll(() => setLogSilent(false));

const savedEnv = { ...process.env };
function restoreEnv(): void {
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
}

describe('pure helpers', () => {
  test('resource attributes carry the service and the downward-API pod identity', () => {
    const attrs = baseResourceAttributes(
      { serviceName: 'cfs-batcher', serviceVersion: '1.2.3' },
      { POD_NAME: 'cfs-batcher-abc', POD_NAMESPACE: 'services', CONTAINER_NAME: 'cfs-batcher' },
    );
    expect(attrs).toEqual({
      'service.name': 'cfs-batcher',
      'service.version': '1.2.3',
      'k8s.pod.name': 'cfs-batcher-abc',
      'k8s.namespace.name': 'services',
      'k8s.container.name': 'cfs-batcher',
    });
    expect(baseResourceAttributes({ serviceName: 'x' }, { POD_NAME: '  ' })).toEqual({ 'service.name': 'x' });
  });

  test('probe and scrape paths are not traced, other paths are', () => {
    expect(isUntracedPath('/livez')).toBe(true);
    expect(isUntracedPath('/metrics?x=1')).toBe(true);
    expect(isUntracedPath('/readyz')).toBe(true);
    expect(isUntracedPath('/startupz')).toBe(true);
    expect(isUntracedPath('/status')).toBe(false);
    expect(isUntracedPath('/v3/sessions')).toBe(false);
    expect(isUntracedPath(undefined)).toBe(false);
  });

  test('OTEL_SDK_DISABLED is read case-insensitively', () => {
    expect(telemetryDisabled({ OTEL_SDK_DISABLED: 'TRUE' })).toBe(true);
    expect(telemetryDisabled({ OTEL_SDK_DISABLED: 'false' })).toBe(false);
    expect(telemetryDisabled({})).toBe(false);
  });

  test('tracing is on only with an exporter configured and the SDK not disabled', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: ' ' })).toBe(false);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(
      false,
    );
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  test('errorAttributes reads the CFS client error fields', () => {
    const err = Object.assign(new Error('404 Not Found'), {
      kind: 'http',
      status: 404,
      method: 'GET',
      url: 'http://cfs/v3/sessions/batcher-1',
      route: '/v3/sessions/{session_name}',
    });
    expect(errorAttributes(err)).toEqual({
      [ERROR_ATTR.cfsErrorKind]: 'http',
      [ERROR_ATTR.httpStatus]: 404,
      [ERROR_ATTR.httpMethod]: 'GET',
      [ERROR_ATTR.urlFull]: 'http://cfs/v3/sessions/batcher-1',
      [ERROR_ATTR.cfsRoute]: '/v3/sessions/{session_name}',
      [ERROR_ATTR.errorType]: '404',
    });
    expect(errorAttributes(new TypeError('x'))).toEqual({ [ERROR_ATTR.errorType]: 'TypeError' });
    expect(errorAttributes('boom')).toEqual({});
  });

  test('boundedShutdown gives up on a stop that never finishes', async () => {
    let settled = false;
    await boundedShutdown(() => new Promise<void>(() => undefined), 50).then(() => (settled = true));
    expect(settled).toBe(true);
    await expect(boundedShutdown(() => Promise.reject(new Error('x')), 50)).resolves.toBeUndefined();
  });
});

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

describe('a collector that never answers', () => {
  test('never delays the work and shutdown still resolves within its bound', async () => {
    let exports = 0;
    const hanging: SpanExporter = {
      export: () => {
        exports += 1; // never calls back, like a collector that accepted the connection and went silent
      },
      shutdown: () => new Promise<void>(() => undefined),
    };
    const telemetry = startTelemetry({
      serviceName: 'cfs-batcher',
      autoDetectResources: false,
      shutdownTimeoutMs: 100,
      spanProcessors: [
        new BatchSpanProcessor(hanging, {
          scheduledDelayMillis: 1,
          exportTimeoutMillis: 50,
          maxQueueSize: 4,
          maxExportBatchSize: 2,
        }),
      ],
    });
    try {
      expect(telemetry.enabled).toBe(true);
      for (let i = 0; i < 20; i += 1) {
        await expect(withSpan(SPAN.cycle, {}, () => i)).resolves.toBe(i);
      }
      await waitFor(() => exports > 0, { what: 'an export attempt', timeoutMs: 10_000, intervalMs: 20 });
      await expect(telemetry.shutdown()).resolves.toBeUndefined();
    } finally {
      await stopTelemetry(telemetry);
    }
  });

  test('startTracing without an exporter configured is a disabled no-op', async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    delete process.env.OTEL_TRACES_EXPORTER;
    try {
      const t = startTracing({ serviceName: 'cfs-batcher' });
      expect(t.enabled).toBe(false);
      await expect(withSpan(SPAN.cycle, {}, () => 'ok')).resolves.toBe('ok');
      await t.shutdown();
    } finally {
      restoreEnv();
    }
  });

  test('OTEL_SDK_DISABLED=true gives a disabled no-op instance', async () => {
    process.env.OTEL_SDK_DISABLED = 'true';
    try {
      const t = startTelemetry({ serviceName: 'cfs-batcher' });
      expect(t.enabled).toBe(false);
      await expect(withSpan(SPAN.cycle, {}, () => 'ok')).resolves.toBe('ok');
      await t.shutdown();
    } finally {
      restoreEnv();
    }
  });
});
