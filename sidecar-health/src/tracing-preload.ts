/**
 * Imported first by main.ts so tracing starts before node:http and express are first required: the instrumentations
 * hook them as they load. It imports the light telemetry entry, not the shared barrel (which would load node:http
 * first). Probe and scrape requests are never traced (UNTRACED_PATHS); the periodic CFS checks run outside any span
 * and so are not traced either. The exec-style `check` command skips tracing: it runs once per probe period and must
 * stay cheap. startTracing loads the SDK only when tracing is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_TRACES_EXPORTER set, OTEL_SDK_DISABLED not true).
 */
import { startTracing, type Telemetry } from '@cfs-batcher/shared/telemetry';

export const SIDECAR_VERSION = '0.1.0';

export const telemetry: Telemetry | null =
  process.argv[2] === 'check'
    ? null
    : startTracing({
        serviceName: 'cfs-batcher-health',
        serviceVersion: SIDECAR_VERSION,
        express: true,
        requireParentForOutgoing: true,
      });
