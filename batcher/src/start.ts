/**
 * The composition root: configuration, metrics, the heartbeat writer (built first, over the state, so the CFS
 * client can stamp progress without anything bound late), the CFS client, the loop, the HTTP server (metrics, explain), signals and crash handling.
 *
 * Crash-only: a bug or an unexpected exception is logged at ERROR with its stack ('Unexpected error occurred') and
 * the process exits 1 so the container restarts. A bad setting prints one line, `Configuration error: ...`, and
 * exits 2 (a restart cannot fix it). SIGTERM/SIGINT abort the current CFS request, write a final `stopping`
 * heartbeat and exit 0.
 */
import type { Server } from 'node:http';
import { CfsClient, errorMessage, exitAfterLogs, setLogLevel, startFailure } from '@cfs-batcher/shared';
import { monotonicClock } from './clock';
import { loadConfig } from './config';
import { noteCfsAnswer } from './creating';
import { CreateIntentStore, intentsPathFor } from './create-intents';
import type { Phases } from './context';
import { logMain as log } from './log';
import { createBatcher, stateHeartbeat } from './loop';
import { componentLookup, createExplainer, explainLookupClient } from './explain-service';
import { serveMetrics } from './http-server';
import { createMetrics } from './metrics';
import { PHASES } from './phases';
import { newState } from './state';
import { BATCHER_VERSION } from './version';

/** Longest a stop may take before the process gives up waiting (k8s grace is 30 s by default). */
const STOP_DEADLINE_MS = 8000;

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** From the tracing preload, flushed (bounded) on the way out. */
  telemetry?: { shutdown(): Promise<void> };
  /** Wraps the production phases; used only by the e2e fault fixture (scripts/src/fixtures). */
  wrapPhases?: (phases: Phases) => Phases;
}

function fatal(what: string, err: unknown): void {
  log.error('Unexpected error occurred', {
    cause: what,
    error: errorMessage(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  exitAfterLogs(1);
}

/**
 * A bad setting or a busy port: one line on stderr and its exit code (shared `startFailure`: 2 for configuration,
 * 1 for listen errors). A restart cannot fix either, and a stack would only hide the line.
 */
function startUpFailure(failure: { line: string; code: number }): never {
  process.stderr.write(`${failure.line}\n`);
  process.exit(failure.code);
}

/** Set once the set-up is done: a ConfigError or listen error after that is a bug, not a setting. */
let settingUp = true;

async function main(opts: StartOptions): Promise<void> {
  const config = loadConfig(opts.env ?? process.env);
  setLogLevel(config.startingLogLevel);
  const metrics = createMetrics({ version: BATCHER_VERSION });
  // Monotonic for every timer; wall time only for what is reported (clock.ts).
  const clock = monotonicClock();
  const state = newState(config.tuning);
  const heartbeat = stateHeartbeat(config.heartbeatPath, clock, state, metrics);
  // Every CFS answer (good or bad) is progress of the main loop: it stamps the heartbeat (throttled) so a long
  // working phase is not mistaken for a hang, while a stopped or blocked loop stops stamping.
  const client = new CfsClient({
    ...config.cfs,
    onRequest: (r) => {
      metrics.observeRequest(r);
      noteCfsAnswer(state.creating, clock.now());
      heartbeat.progress();
    },
  });
  // A port already in use rejects with node's listen error: one EADDRINUSE line naming the port, exit 1.
  const explainer = createExplainer({
    state,
    clock,
    getComponent: componentLookup(explainLookupClient(config.cfs, metrics)),
    maxLookups: config.explainLookups,
  });
  const server: Server | undefined =
    config.metricsPort > 0 ? await serveMetrics(metrics.registry, config.metricsPort, '0.0.0.0', explainer) : undefined;
  const phases = opts.wrapPhases ? opts.wrapPhases(PHASES) : PHASES;
  const intents = new CreateIntentStore(intentsPathFor(config.heartbeatPath));
  const batcher = createBatcher({ client, state, heartbeat, metrics, clock, tuning: config.tuning, phases, intents });
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
  log.info(`Starting cfs-batcher ${BATCHER_VERSION} against ${client.baseUrl}`);
  await batcher.run(ac.signal);
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await opts.telemetry?.shutdown();
  log.info('Stopped');
  process.exit(0);
}

/** Runs the batcher as this process; never returns normally (exits 0 on a signal, 1 on a crash, 2 on bad config). */
export function start(opts: StartOptions = {}): Promise<void> {
  process.on('uncaughtException', (err) => fatal('uncaughtException', err));
  process.on('unhandledRejection', (reason) => fatal('unhandledRejection', reason));
  return main(opts).catch((err: unknown) => {
    const failure = settingUp ? startFailure(err) : null;
    return failure ? startUpFailure(failure) : fatal('main', err);
  });
}
