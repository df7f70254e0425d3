/**
 * Entry point: `node batcher/dist/main.js`. Crash-only: a bug, a bad environment or an unexpected exception is
 * logged at ERROR with its stack and the process exits non-zero so the container restarts. SIGTERM/SIGINT abort the
 * current CFS request, write a final `stopping` heartbeat and exit 0.
 */
import { telemetry } from './tracing-preload';
import type { Server } from 'node:http';
import {
  CfsClient,
  DEFAULT_HEARTBEAT_PATH,
  cfsClientOptionsFromEnv,
  envInt,
  envString,
  errorMessage,
  getLogger,
  parseCfsLogLevel,
  setLogLevel,
} from '@cfs-batcher/shared';
import { createBatcher } from './batcher';
import { createMetrics, serveMetrics } from './metrics';
import { testFaultsFromEnv } from './test-faults';
import { BATCHER_VERSION } from './version';

const log = getLogger('batcher.__main__');
/** Longest a stop may take before the process gives up waiting (k8s grace is 30 s by default). */
const STOP_DEADLINE_MS = 8000;

function fatal(what: string, err: unknown): never {
  log.error('Unexpected error occurred', {
    cause: what,
    error: errorMessage(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  process.exit(1);
}

process.on('uncaughtException', (err) => fatal('uncaughtException', err));
process.on('unhandledRejection', (reason) => fatal('unhandledRejection', reason));

async function main(): Promise<void> {
  const env = process.env;
  setLogLevel(parseCfsLogLevel(env.STARTING_CFS_LOG_LEVEL, 'INFO'));
  const heartbeatPath = envString(env, 'HEARTBEAT_PATH', DEFAULT_HEARTBEAT_PATH);
  const metricsPort = envInt(env, 'METRICS_PORT', 9088, 0, 65535);
  const metrics = createMetrics({ version: BATCHER_VERSION });
  // Every CFS answer (good or bad) is progress of the main loop: it stamps the heartbeat (throttled) so a long
  // working phase is not mistaken for a hang, while a stopped or blocked loop stops stamping.
  let onProgress = (): void => undefined;
  const client = new CfsClient({
    ...cfsClientOptionsFromEnv(env),
    onRequest: (r) => {
      metrics.observeRequest(r);
      onProgress();
    },
  });
  // A port already in use is fatal (rejects): the pod spec is wrong and a restart with a clear log is the fix.
  const server: Server | undefined = metricsPort > 0 ? await serveMetrics(metrics.registry, metricsPort) : undefined;
  const batcher = createBatcher({ client, heartbeatPath, metrics, testFaults: testFaultsFromEnv(env) });
  onProgress = () => batcher.heartbeat.progress();
  const ac = new AbortController();
  const stop = (signal: string): void => {
    if (ac.signal.aborted) return;
    log.info(`Received ${signal}; stopping`);
    ac.abort();
    setTimeout(() => fatal('stop deadline', new Error(`did not stop within ${STOP_DEADLINE_MS} ms`)), STOP_DEADLINE_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  log.info(`Starting cfs-batcher ${BATCHER_VERSION} against ${client.baseUrl}`);
  await batcher.run(ac.signal);
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await telemetry.shutdown();
  log.info('Stopped');
  process.exit(0);
}

main().catch((err: unknown) => fatal('main', err));
