/**
 * `npm start`: the whole pod on one machine, no cluster. The CFS simulator (demo inventory), the batcher and the
 * health sidecar run as child processes sharing a temporary heartbeat folder; a kubelet-like prober applies the
 * manifest's probes to them and restarts the batcher when its liveness fails.
 *
 * Break it on purpose: `kill -STOP <batcher pid>` (printed below), or inject CFS errors through the simulator's
 * fault API (docs/deployment.md); the prober kills and restarts the batcher as the kubelet would.
 */
import '@cfs-batcher/shared/node-check';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_POD_USAGE, UsageError, parseArgs } from './local-pod-args';
import { demoNode, explainExample } from './local-pod-explain';
import { statusLine, type Summary } from './local-pod-status';
import { freePort, portFree } from './net';
import { LocalPod, MANIFEST_HEALTH_PORT } from './pod';
import { PodLimits } from './pod-limits';
import { rssMb } from './bench-procs';
import { manifestContainers, manifestEnv } from './pod-env';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec, type PodSpec } from './pod-spec';
import { patchOptions, waitForCfs } from './sim-client';

export { UsageError, parseArgs, type LocalPodArgs } from './local-pod-args';
export { freePort } from './net';

/** From a stop signal to every child gone: a program that is asked to stop, stops (then SIGKILL for the stragglers). */
const STOP_BUDGET_MS = 1500;

/** Resolves with the reason on the first SIGINT or SIGTERM (installed first thing, so no signal orphans a child). */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

function stamp(): string {
  return new Date().toISOString().slice(11, 19);
}

async function main(argv: readonly string[]): Promise<number> {
  const signalled = stopSignal();
  const args = parseArgs(argv);
  if (args.help) {
    process.stdout.write(LOCAL_POD_USAGE);
    return 0;
  }
  const root = path.resolve(__dirname, '..', '..');
  const entries = {
    sim: path.join(root, 'cfs-sim', 'dist', 'main.js'),
    batcher: path.join(root, 'batcher', 'dist', 'main.js'),
    sidecar: path.join(root, 'sidecar-health', 'dist', 'main.js'),
  };
  for (const [what, file] of Object.entries(entries)) {
    if (!existsSync(file))
      throw new UsageError(`${what} is not built (${path.relative(root, file)} missing): run npm run build`);
  }
  const scenario = path.resolve(root, args.scenario);
  if (!existsSync(scenario)) throw new UsageError(`scenario ${args.scenario} not found`);

  const spec: PodSpec = loadPodSpec(root);
  const batcherSpec = spec.containers[BATCHER_CONTAINER]!;
  const sidecarSpec = spec.containers[SIDECAR_CONTAINER]!;
  // On a terminal the status line is rewritten in place; messages clear it first.
  const tty = process.stdout.isTTY === true && !args.quiet;
  const say = (msg: string) => process.stdout.write(`${tty ? '\r\x1b[2K' : ''}[${stamp()}] ${msg}\n`);
  say(`local pod    pid ${process.pid}: kill -INT ${process.pid} (or Ctrl-C) stops everything`);
  say(`pod spec from ${spec.source}`);

  // Ports: the manifest's, unless --free-ports (tests, or a second local pod).
  const manifestHealthPort = Number(
    manifestEnv(sidecarSpec, 'HEALTH_PORT') ?? sidecarSpec.ports.health ?? MANIFEST_HEALTH_PORT,
  );
  const manifestMetricsPort = Number(manifestEnv(batcherSpec, 'METRICS_PORT') ?? batcherSpec.ports.metrics ?? 9088);
  const healthPort = args.freePorts ? await freePort() : manifestHealthPort;
  const metricsPort = args.freePorts ? await freePort() : manifestMetricsPort;
  const simPort = args.simPort > 0 ? args.simPort : await freePort();
  for (const p of [healthPort, metricsPort]) {
    if (!(await portFree(p))) throw new UsageError(`port ${p} is busy (another local pod?); use --free-ports`);
  }

  const runDir = path.join(root, '.local-pod');
  const hbDir = mkdtempSync(path.join(os.tmpdir(), 'cfs-local-pod-'));
  const heartbeatPath = path.join(hbDir, 'heartbeat.json');
  const simOrigin = `http://127.0.0.1:${simPort}`;
  const cfsUrl = `${simOrigin}/v3`;
  const tracing = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  const local: Record<string, string | undefined> = {
    CFS_API_URL: cfsUrl,
    HEARTBEAT_PATH: heartbeatPath,
    OTEL_EXPORTER_OTLP_ENDPOINT: tracing,
    // No collector here unless the user points at one.
    OTEL_SDK_DISABLED: tracing ? 'false' : 'true',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const onMessage = (container: string, message: string) => {
    const important = !args.quiet || /started|SIGTERM|SIGKILL|exited|failed/.test(message);
    if (important) say(`${container}: ${message}`);
  };
  // --limits: each container in a cgroup with its manifest limits, as the kubelet runs it.
  const limits: Partial<Record<'batcher' | 'sidecar', PodLimits>> = {};
  if (args.limits) {
    limits.batcher = PodLimits.create(batcherSpec.limits);
    try {
      limits.sidecar = PodLimits.create(sidecarSpec.limits);
    } catch (err) {
      limits.batcher.remove();
      throw err;
    }
  }
  let early: string | null = null;
  void signalled.then((why) => (early = why));
  // The simulator plays CFS; it is not part of the pod, so it gets no probes.
  const pod: LocalPod = new LocalPod({
    name: 'local',
    scenarioFile: scenario,
    simPort,
    // The user's environment, as before (CFS_OPENAPI_SPEC and friends reach the simulator).
    simEnv: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'INFO' },
    logDir: runDir,
    heartbeatPath,
    healthPort,
    ports: { [manifestMetricsPort]: metricsPort },
    onMessage,
    // Short demo options before the containers start, so batches form and go out within seconds.
    ready: async () => {
      await waitForCfs(cfsUrl, 30_000, () => !pod.sim.alive || early !== null);
      await patchOptions(cfsUrl, { batcher_check_interval: args.checkInterval, batch_window: args.batchWindow });
    },
    containers: () =>
      manifestContainers(spec, {
        id: { podName: 'cfs-batcher-local', namespace: 'local' },
        local,
        batcher: { METRICS_PORT: String(metricsPort) },
        sidecar: { HEALTH_PORT: String(healthPort) },
        ...(limits.batcher ? { batcherPrefix: limits.batcher.prefix() } : {}),
        ...(limits.sidecar ? { sidecarPrefix: limits.sidecar.prefix() } : {}),
      }),
  });
  const cleanup = () => {
    for (const l of Object.values(limits)) l.remove();
    rmSync(hbDir, { recursive: true, force: true });
  };
  const starting = pod.start();
  starting.catch(() => undefined); // a signal may win the race below; start's own failure is then moot
  try {
    await Promise.race([starting, signalled]);
  } catch (err) {
    await pod.close(STOP_BUDGET_MS);
    cleanup();
    throw err;
  }
  if (early !== null) {
    await pod.close(STOP_BUDGET_MS);
    cleanup();
    return 0;
  }
  void pod.sim.exited.then((e) =>
    say(`cfs-sim exited (${e.signal ?? e.code}); see ${path.relative(root, pod.simLogFile)}`),
  );
  const batcher = pod.container(BATCHER_CONTAINER);
  const sidecar = pod.container(SIDECAR_CONTAINER);

  const live = batcherSpec.probes.liveness;
  say(`cfs-sim      ${cfsUrl} (faults: POST http://127.0.0.1:${simPort}/__sim/faults)`);
  say(`sidecar      http://127.0.0.1:${healthPort}/status   http://127.0.0.1:${healthPort}/metrics`);
  say(`batcher      http://127.0.0.1:${metricsPort}/metrics   http://127.0.0.1:${metricsPort}/explain/{id}`);
  if (live) {
    say(
      `liveness     ${live.path} every ${live.periodSeconds} s, timeout ${live.timeoutSeconds} s, ` +
        `${live.failureThreshold} failures, then SIGKILL after ${live.terminationGracePeriodSeconds ?? spec.podTerminationGracePeriodSeconds} s`,
    );
  }
  say(`logs in      ${path.relative(root, runDir)}/   heartbeat ${heartbeatPath}`);
  say('try          kill -STOP <batcher pid>   (Ctrl-C stops everything)');
  const demo = demoNode(scenario);
  if (demo !== null)
    void explainExample(heartbeatPath, metricsPort, demo).then((line) => {
      if (line !== null) say(`explain      ${line}`);
    });

  const summary: Summary = {
    components: {},
    batcherRestarts: 0,
    sidecarRestarts: 0,
    cycle: null,
    sessionsCreated: null,
  };
  let lastLine = '';
  let lastPrinted = 0;
  let statusBusy = false;
  const statusTimer = setInterval(() => {
    if (statusBusy) return;
    statusBusy = true;
    void statusLine(cfsUrl, simOrigin, heartbeatPath, healthPort, batcher.pid, summary)
      .then((line) => {
        summary.batcherRestarts = batcher.snapshot.restarts;
        summary.sidecarRestarts = sidecar.snapshot.restarts;
        lastLine = line;
        if (args.quiet) return;
        if (tty) process.stdout.write(`\r\x1b[2K${line}`);
        else if (Date.now() - lastPrinted >= 5000) {
          lastPrinted = Date.now();
          process.stdout.write(`${line}\n`);
        }
      })
      .finally(() => {
        statusBusy = false;
      });
  }, 1000);

  const why = await Promise.race([
    signalled,
    new Promise<string>((resolve) => {
      if (args.durationS !== null)
        setTimeout(() => resolve(`--duration ${args.durationS}`), args.durationS * 1000).unref();
    }),
  ]);
  clearInterval(statusTimer);
  const peak = (pid: number | null): string => (pid === null ? '-' : (rssMb(pid)?.toFixed(1) ?? '-'));
  say(`peak RSS     sidecar ${peak(sidecar.pid)} MB, batcher ${peak(batcher.pid)} MB (VmHWM of the running instances)`);
  say(`stopping (${why})`);
  // SIGTERM to every container at once, like a pod deletion; the prober keeps ticking. Whatever is still running
  // when the stop budget is spent (a stopped or hung process) is SIGKILLed: Ctrl-C must never leave a process behind.
  await pod.close(STOP_BUDGET_MS);
  cleanup();
  if (lastLine) say(`last status: ${lastLine}`);
  process.stdout.write(`local-pod summary ${JSON.stringify(summary)}\n`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      const msg = err instanceof Error ? err.message : String(err);
      process.stderr.write(`local-pod: ${msg}\n`);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
