/**
 * Imported first by main.ts: tracing must start before the HTTP modules are used so outgoing CFS calls are traced.
 * startTracing never throws; it loads the SDK only when tracing is configured (a broken set-up runs untraced).
 */
import { startTracing } from '@cfs-batcher/shared';
import { BATCHER_VERSION } from './version';

export const telemetry = startTracing({ serviceName: 'cfs-batcher', serviceVersion: BATCHER_VERSION });
