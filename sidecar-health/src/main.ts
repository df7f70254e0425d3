/**
 * Entry point. `node main.js` serves the probes; `node main.js check [live|startup] [--standalone]` prints one
 * verdict and exits 0 (healthy) or 1.
 */
import { telemetry } from './tracing-preload';
import { exitAfterLogs, getLogger, parseCfsLogLevel, runMain, setLogLevel } from '@cfs-batcher/shared';
import { runCheck, type CheckKind } from './check';
import { configFromEnv } from './config';
import { createSidecar, systemClock } from './sidecar';

const log = getLogger('sidecar.health');

async function serve(): Promise<void> {
  const config = configFromEnv(process.env);
  const sidecar = createSidecar(config);
  await sidecar.start();
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

async function check(args: string[]): Promise<number> {
  const kind: CheckKind = args.includes('startup') ? 'startup' : 'live';
  const config = configFromEnv(process.env);
  const r = await runCheck(config, kind, args.includes('--standalone'), systemClock);
  process.stdout.write(`${JSON.stringify({ ok: r.ok, source: r.source, ...r.body })}\n`);
  return r.ok ? 0 : 1;
}

async function main(): Promise<number | void> {
  setLogLevel(parseCfsLogLevel(process.env.LOG_LEVEL, 'INFO'));
  const [cmd, ...rest] = process.argv.slice(2);
  if (cmd === 'check') return check(rest);
  if (cmd !== undefined && cmd !== 'serve') {
    process.stderr.write(`usage: main.js [serve] | check [live|startup] [--standalone]\n`);
    return 1;
  }
  await serve();
}

// a configuration error exits 2 and a busy port 1, each with one line (runMain)
runMain(main, (err) => {
  log.error(`Health sidecar failed: ${(err as Error).message}`, { stack: (err as Error).stack });
  exitAfterLogs(1);
});
