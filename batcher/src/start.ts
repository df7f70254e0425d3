/**
 * The composition root: configuration, metrics, the CFS client (built by the loop around its progress wire), the
 * loop, the HTTP server (metrics, explain), signals and crash handling.
 *
 * Crash-only: a bug or an unexpected exception is logged at ERROR with its stack ('Unexpected error occurred') and
 * the process exits 1 so the container restarts. A bad setting or argument logs one ERROR line,
 * `Configuration error: ...`, and exits 2 (a restart cannot fix it); a busy metrics port one `Cannot listen ...`
 * line and exit 1 (the shared `exitOnStartFailure`, as in the sidecar). SIGTERM/SIGINT abort the current CFS
 * request, write a final `stopping` heartbeat and exit 0.
 */
import type { Server } from 'node:http';
import {
  CfsAnswers,
  CfsClient,
  checkCfsBase,
  errorMessage,
  exitAfterLogs,
  exitOnStartFailure,
  logTracingStatus,
  setLogLevel,
  withListenSetting,
  withSpan,
  type RequestInfo,
} from '@cfs-batcher/shared';
import { batcherUsage, wantsBatcherHelp } from './cli';
import { monotonicClock } from './clock';
import { EXPLAIN_LOOKUPS, loadConfig } from './config';
import { CreateIntentStore, intentsPathFor } from './create-intents';
import type { PhaseSteps } from './context';
import { logMain as log } from './log';
import { createBatcher } from './loop';
import { componentLookup, configurationLookup, createExplainer, explainLookupClient } from './explain-service';
import { serveMetrics } from './http-server';
import { createMetrics } from './metrics';
import { PHASE_STEPS } from './phases';
import { SPAN } from './spans';
import { BATCHER_VERSION } from './version';

/** Longest a stop may take before the process gives up waiting (k8s grace is 30 s by default). */
export const STOP_DEADLINE_MS = 8000;

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** From the tracing preload, flushed (bounded) on the way out. */
  telemetry?: { shutdown(): Promise<void>; status?: string };
  /** Wraps the production phases; used only by the e2e fault fixture (scripts/src/fixtures). */
  wrapPhases?: (phases: PhaseSteps) => PhaseSteps;
  /** Variables the caller reads itself (the fixture's), not refused as unknown. */
  knownSettings?: readonly string[];
  /** The command line (default: this process's). */
  argv?: readonly string[];
}

function fatal(what: string, err: unknown): void {
  log.error('Unexpected error occurred', {
    cause: what,
    error: errorMessage(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  exitAfterLogs(1);
}

/** Set once the set-up is done: a ConfigError or listen error after that is a bug, not a setting. */
let settingUp = true;

async function main(opts: StartOptions): Promise<void> {
  if (wantsBatcherHelp(opts.argv ?? process.argv.slice(2))) {
    process.stdout.write(batcherUsage());
    return exitAfterLogs(0);
  }
  const config = loadConfig(opts.env ?? process.env, opts.knownSettings);
  setLogLevel(config.startingLogLevel);
  logTracingStatus(opts.telemetry);
  const metrics = createMetrics({ version: BATCHER_VERSION });
  // Monotonic for every timer; wall time only for what is reported (clock.ts).
  const clock = monotonicClock();
  // the loop's CFS answers, for a CFS_API_URL check that could not be made at start
  const answers = new CfsAnswers();
  const phases = opts.wrapPhases ? opts.wrapPhases(PHASE_STEPS) : PHASE_STEPS;
  const intents = new CreateIntentStore(intentsPathFor(config.heartbeatPath));
  const batcher = createBatcher({
    // Every HTTP attempt (retries included) reaches the loop's progress wire and the request metrics.
    client: (onRequest, onCallState) =>
      new CfsClient({
        ...config.cfs,
        onRequest: (r) => {
          onRequest(r);
          answers.saw(r);
        },
        onCallState,
      }),
    heartbeatPath: config.heartbeatPath,
    metrics,
    clock,
    tuning: config.tuning,
    phases,
    intents,
  });
  // A port already in use rejects with node's listen error: one EADDRINUSE line naming the port, exit 1.
  const lookups = explainLookupClient(config.cfs, metrics);
  const explainer = createExplainer({
    state: batcher.state,
    clock,
    getComponent: componentLookup(lookups),
    getConfiguration: configurationLookup(lookups),
    maxLookups: EXPLAIN_LOOKUPS,
    cfsBaseUrl: config.cfs.baseUrl,
  });
  const server: Server | undefined =
    config.metricsPort > 0
      ? await withListenSetting(
          serveMetrics(metrics.registry, config.metricsPort, '0.0.0.0', explainer),
          'METRICS_PORT',
        )
      : undefined;
  const ac = new AbortController();
  const stop = (signal: string): void => {
    if (ac.signal.aborted) return;
    log.info(`Received ${signal}; stopping`);
    ac.abort();
    setTimeout(
      () => fatal('stop deadline', new Error(`did not stop within ${STOP_DEADLINE_MS} ms`)),
      STOP_DEADLINE_MS,
    ).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  settingUp = false;
  log.info(`Starting cfs-batcher ${BATCHER_VERSION} against ${config.cfs.baseUrl}`);
  // Beside the loop, not before it: a CFS that hangs must not hold back the first heartbeat. A base proven wrong
  // ends the process as a bad setting does (it can have sent nothing: every call under that base answers 404).
  // Its requests are counted (route, status) but are not loop progress: they stamp no heartbeat.
  const probing = { ...config.cfs, onRequest: (r: RequestInfo) => metrics.observeRequest(r) };
  const how = { program: 'The batcher', nextAnswer: (s: AbortSignal) => answers.next(s) };
  void withSpan(SPAN.cfsUrlCheck, {}, () => checkCfsBase(probing, log, ac.signal, how)).catch((err: unknown) => {
    if (!exitOnStartFailure(err)) fatal('CFS_API_URL check', err);
  });
  await batcher.run(ac.signal);
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await opts.telemetry?.shutdown();
  log.info('Stopped');
  exitAfterLogs(0);
}

/** Runs the batcher as this process; never returns normally (exits 0 on a signal, 1 on a crash, 2 on bad config). */
export function start(opts: StartOptions = {}): Promise<void> {
  process.on('uncaughtException', (err) => fatal('uncaughtException', err));
  process.on('unhandledRejection', (reason) => fatal('unhandledRejection', reason));
  return main(opts).catch((err: unknown) => {
    // a bad setting or a busy port: one ERROR line and its exit code; a restart cannot fix either, a stack would
    // only hide the line
    if (settingUp && exitOnStartFailure(err)) return;
    fatal('main', err);
  });
}
