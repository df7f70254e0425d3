/** Entry point: `node batcher/dist/main.js`. The tracing preload comes first, so outgoing CFS calls are traced. */
import '@cfs-batcher/shared/node-check';
import { telemetry } from './tracing-preload';
import { start } from './start';

void start({ telemetry });
