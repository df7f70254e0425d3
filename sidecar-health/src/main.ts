/**
 * Entry point. `node main.js` serves the probes; `node main.js check [live|startup] [--standalone]` prints one
 * verdict and exits 0 (healthy) or 1; `--help` prints the usage (cli.ts).
 */
import '@cfs-batcher/shared/node-check';
import { telemetry } from './tracing-preload';
import {
  CfsAnswers,
  checkCfsBase,
  exitAfterLogs,
  exitOnStartFailure,
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
  // the polls' answers from CFS, for a CFS_API_URL check that could not be made at start
  const answers = new CfsAnswers();
  const sidecar = createSidecar({ ...config, cfs: { ...config.cfs, onRequest: (r) => answers.saw(r) } });
  await withListenSetting(sidecar.start(), 'HEALTH_PORT');
  const ac = new AbortController();
  if (config.cfsPollMs > 0) {
    // The batcher's check, beside the polls: a base proven wrong is a bad setting (one line, exit 2), never a CFS
    // outage paged as CfsBatcherCfsUnreachable.
    const how = { program: 'The health sidecar', nextAnswer: (s: AbortSignal) => answers.next(s) };
    void checkCfsBase(config.cfs, log, ac.signal, how).catch((err: unknown) => {
      if (exitOnStartFailure(err)) return;
      log.error(`CFS_API_URL check failed: ${(err as Error).message}`, { stack: (err as Error).stack });
    });
  }
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    ac.abort();
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
