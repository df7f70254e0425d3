/**
 * Tracing never stands in the way of the work: a collector that never answers delays no span and no shutdown past
 * its bound, and with no exporter configured or the SDK disabled startTelemetry()/startTracing() are no-ops.
 */
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, withSpan } from '@cfs-batcher/shared';
import { SPAN } from '@cfs-batcher/batcher';
import { startTelemetry } from '@cfs-batcher/shared/tracing';
import { waitFor } from '../helpers/wait';
import { quietLogs, restoreEnv, stopTelemetry } from './telemetry-lifecycle';

quietLogs();

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
