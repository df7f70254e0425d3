/**
 * Imported first by main.ts: tracing must start before node:http is first required (by the CFS client and the
 * metrics server), so the HTTP instrumentation hooks it as it loads and outgoing CFS calls are traced. It imports the
 * light telemetry entry, not the shared barrel, which would load the CFS client (and node:http) first. startTracing
 * never throws; it loads the SDK only when tracing is configured (a broken set-up runs untraced).
 */
import { startTracing } from '@cfs-batcher/shared/telemetry';
import { BATCHER_VERSION } from './version';

export const telemetry = startTracing({ serviceName: 'cfs-batcher', serviceVersion: BATCHER_VERSION });
