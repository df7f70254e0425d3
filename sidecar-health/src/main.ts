/**
 * Entry point. `node main.js` serves the probes; `node main.js check [live|startup] [--standalone]` prints one
 * verdict and exits 0 (healthy) or 1; `--help` prints the usage (cli.ts).
 */
import '@cfs-batcher/shared/node-check';
import { telemetry } from './tracing-preload';
import {
  exitAfterLogs,
  getLogger,
  logTracingStatus,
  runMain,
  setLogLevel,
  withListenSetting,
} from '@cfs-batcher/shared';
import { runCheck, type CheckKind } from './check';
import { parseSidecarArgs, sidecarUsage } from './cli';
import { configFromEnv } from './config';
import { createSidecar, systemClock } from './sidecar';

const log = getLogger('sidecar.health');

async function serve(): Promise<void> {
  const config = configFromEnv(process.env);
  setLogLevel(config.logLevel);
  logTracingStatus(telemetry);
  const sidecar = createSidecar(config);
  await withListenSetting(sidecar.start(), 'HEALTH_PORT');
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`Received ${signal}; stopping the health sidecar`);
    sidecar
      .stop()
      .then(() => telemetry?.shutdown())
      .then(
        () => exitAfterLogs(0),
        () => exitAfterLogs(1),
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function check(kind: CheckKind, standalone: boolean): Promise<number> {
  const config = configFromEnv(process.env);
  setLogLevel(config.logLevel);
  const r = await runCheck(config, kind, standalone, systemClock);
  process.stdout.write(`${JSON.stringify({ ok: r.ok, source: r.source, ...r.body })}\n`);
  return r.ok ? 0 : 1;
}

async function main(): Promise<number | void> {
  const command = parseSidecarArgs(process.argv.slice(2));
  if (command.kind === 'help') {
    process.stdout.write(sidecarUsage());
    return 0;
  }
  if (command.kind === 'check') return check(command.check, command.standalone);
  await serve();
}

// a configuration error or a bad argument exits 2 and a busy port 1, each with one line (runMain)
runMain(main, (err) => {
  log.error(`Health sidecar failed: ${(err as Error).message}`, { stack: (err as Error).stack });
  exitAfterLogs(1);
});
