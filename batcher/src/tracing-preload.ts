/**
 * Imported first by main.ts: tracing must start before the HTTP modules are used so outgoing CFS calls are traced.
 * startTelemetry never throws (a broken set-up runs untraced).
 */
import { startTelemetry } from '@cfs-batcher/shared';
import { BATCHER_VERSION } from './version';

export const telemetry = startTelemetry({ serviceName: 'cfs-batcher', serviceVersion: BATCHER_VERSION });
