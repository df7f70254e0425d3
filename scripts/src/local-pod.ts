/**
 * `npm start`: the whole pod on one machine, no cluster. The CFS simulator (demo inventory), the batcher and the
 * health sidecar run as child processes sharing a temporary heartbeat folder; a kubelet-like prober applies the
 * manifest's probes to them and restarts the batcher when its liveness fails.
 *
 * Break it on purpose: `kill -STOP <batcher pid>` (printed below), or inject CFS errors through the simulator's
 * fault API (docs/deployment.md); the prober kills and restarts the batcher as the kubelet would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SupervisedContainer } from './container';
import { UsageError, parseArgs } from './local-pod-args';
import { statusLine, type Summary } from './local-pod-status';
import { containerEnv, manifestEnv } from './pod-env';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec, type PodSpec } from './pod-spec';
import { patchOptions, waitForCfs } from './sim-client';

export { UsageError, parseArgs, type LocalPodArgs } from './local-pod-args';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

/** From a stop signal to every child gone: a program that is asked to stop, stops (then SIGKILL for the stragglers). */
const STOP_BUDGET_MS = 1500;

/** Resolves with the reason on the first SIGINT or SIGTERM (installed first thing, so no signal orphans a child). */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

/** SIGKILL by pid, ignoring a process that is already gone. */
function killHard(pid: number | null | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

function stamp(): string {
  return new Date().toISOString().slice(11, 19);
}


async function main(argv: readonly string[]): Promise<number> {
  const signalled = stopSignal();
  const args = parseArgs(argv);
  const root = path.resolve(__dirname, '..', '..');
  const entries = {
    sim: path.join(root, 'cfs-sim', 'dist', 'main.js'),
    batcher: path.join(root, 'batcher', 'dist', 'main.js'),
    sidecar: path.join(root, 'sidecar-health', 'dist', 'main.js'),
  };
  for (const [what, file] of Object.entries(entries)) {
    if (!existsSync(file)) throw new UsageError(`${what} is not built (${path.relative(root, file)} missing): run npm run build`);
  }
  const scenario = path.resolve(root, args.scenario);
  if (!existsSync(scenario)) throw new UsageError(`scenario ${args.scenario} not found`);

  const pod: PodSpec = loadPodSpec(root);
  const batcherSpec = pod.containers[BATCHER_CONTAINER]!;
  const sidecarSpec = pod.containers[SIDECAR_CONTAINER]!;
  // On a terminal the status line is rewritten in place; messages clear it first.
  const tty = process.stdout.isTTY === true && !args.quiet;
  const say = (msg: string) => process.stdout.write(`${tty ? '\r\x1b[2K' : ''}[${stamp()}] ${msg}\n`);
  say(`local pod    pid ${process.pid}: kill -INT ${process.pid} (or Ctrl-C) stops everything`);
  say(`pod spec from ${pod.source}`);

  // Ports: the manifest's, unless --free-ports (tests, or a second local pod).
  const manifestHealthPort = Number(manifestEnv(sidecarSpec, 'HEALTH_PORT') ?? sidecarSpec.ports.health ?? 8081);
  const manifestMetricsPort = Number(manifestEnv(batcherSpec, 'METRICS_PORT') ?? batcherSpec.ports.metrics ?? 9088);
  const healthPort = args.freePorts ? await freePort() : manifestHealthPort;
  const metricsPort = args.freePorts ? await freePort() : manifestMetricsPort;
  const simPort = args.simPort > 0 ? args.simPort : await freePort();
  for (const p of [healthPort, metricsPort]) {
    if (!(await portFree(p))) throw new UsageError(`port ${p} is busy (another local pod?); use --free-ports`);
  }
  const mapPort = (p: number) => (p === manifestHealthPort ? healthPort : p === manifestMetricsPort ? metricsPort : p);

  const runDir = path.join(root, '.local-pod');
  mkdirSync(runDir, { recursive: true });
  const hbDir = mkdtempSync(path.join(os.tmpdir(), 'cfs-local-pod-'));
  const heartbeatPath = path.join(hbDir, 'heartbeat.json');
  const simOrigin = `http://127.0.0.1:${simPort}`;
  const cfsUrl = `${simOrigin}/v3`;

  // The simulator plays CFS; it is not part of the pod, so it gets no probes.
  const simLog = path.join(runDir, 'cfs-sim.log');
  const sim: ChildProcess = spawn(process.execPath, [entries.sim, '--port', String(simPort), '--scenario', scenario], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'INFO' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const simOut = createWriteStream(simLog, { flags: 'w' });
  sim.stdout?.pipe(simOut);
  sim.stderr?.pipe(simOut);
  let simExited = false;
  sim.once('exit', (code, signal) => {
    simExited = true;
    say(`cfs-sim exited (${signal ?? code}); see ${path.relative(root, simLog)}`);
  });

  const cleanup: Array<() => Promise<void> | void> = [];
  const stopSim = async () => {
    if (simExited) return;
    const gone = new Promise<void>((r) => sim.once('exit', () => r()));
    sim.kill('SIGTERM');
    const t = setTimeout(() => sim.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(t);
  };
  cleanup.push(stopSim, () => rmSync(hbDir, { recursive: true, force: true }));

  let early: string | null = null;
  void signalled.then((why) => (early = why));
  try {
    await waitForCfs(cfsUrl, 30_000, () => simExited || early !== null);
  } catch (err) {
    for (const c of cleanup) await c();
    if (early !== null) return 0;
    throw err;
  }
  // Short demo options so batches form and go out within seconds.
  await patchOptions(cfsUrl, { batcher_check_interval: args.checkInterval, batch_window: args.batchWindow });

  const tracing = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  const localOverrides: Record<string, string | undefined> = {
    CFS_API_URL: cfsUrl,
    HEARTBEAT_PATH: heartbeatPath,
    CA_CERT: undefined,
    OTEL_EXPORTER_OTLP_ENDPOINT: tracing,
    // No collector here unless the user points at one.
    OTEL_SDK_DISABLED: tracing ? 'false' : 'true',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const id = { podName: 'cfs-batcher-local', namespace: 'local' };
  const onMessage = (container: string, message: string) => {
    const important = !args.quiet || /started|SIGTERM|SIGKILL|exited|failed/.test(message);
    if (important) say(`${container}: ${message}`);
  };
  const sidecar = new SupervisedContainer({
    name: SIDECAR_CONTAINER,
    command: process.execPath,
    args: [entries.sidecar],
    cwd: root,
    env: containerEnv(sidecarSpec, id, { ...localOverrides, HEALTH_PORT: String(healthPort) }, process.env),
    probes: sidecarSpec.probes,
    mapPort,
    logFile: path.join(runDir, `${SIDECAR_CONTAINER}.log`),
    onMessage,
  });
  const batcher = new SupervisedContainer({
    name: BATCHER_CONTAINER,
    command: process.execPath,
    args: [entries.batcher],
    cwd: root,
    env: containerEnv(batcherSpec, id, { ...localOverrides, METRICS_PORT: String(metricsPort) }, process.env),
    probes: batcherSpec.probes,
    mapPort,
    logFile: path.join(runDir, `${BATCHER_CONTAINER}.log`),
    onMessage,
  });
  const containers = [sidecar, batcher];
  const ticker = setInterval(() => containers.forEach((c) => c.tick()), 100);

  const live = batcherSpec.probes.liveness;
  say(`cfs-sim      ${cfsUrl} (faults: POST http://127.0.0.1:${simPort}/__sim/faults)`);
  say(`sidecar      http://127.0.0.1:${healthPort}/status   http://127.0.0.1:${healthPort}/metrics`);
  say(`batcher      http://127.0.0.1:${metricsPort}/metrics`);
  if (live) {
    say(
      `liveness     ${live.path} every ${live.periodSeconds} s, timeout ${live.timeoutSeconds} s, ` +
        `${live.failureThreshold} failures, then SIGKILL after ${live.terminationGracePeriodSeconds ?? pod.podTerminationGracePeriodSeconds} s`,
    );
  }
  say(`logs in      ${path.relative(root, runDir)}/   heartbeat ${heartbeatPath}`);
  say('try          kill -STOP <batcher pid>   (Ctrl-C stops everything)');

  const summary: Summary = { components: {}, batcherRestarts: 0, sidecarRestarts: 0, cycle: null, sessionsCreated: null };
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
      if (args.durationS !== null) setTimeout(() => resolve(`--duration ${args.durationS}`), args.durationS * 1000).unref();
    }),
  ]);
  clearInterval(statusTimer);
  say(`stopping (${why})`);
  // SIGTERM to every container at once, like a pod deletion; the prober keeps ticking. Whatever is still running
  // when the stop budget is spent (a stopped or hung process) is SIGKILLed: Ctrl-C must never leave a process behind.
  const all = Promise.all([batcher.stop(), sidecar.stop(), stopSim()]);
  const budget = setTimeout(() => {
    for (const pid of [batcher.pid, sidecar.pid, sim.pid]) killHard(pid);
  }, STOP_BUDGET_MS);
  await all;
  clearTimeout(budget);
  clearInterval(ticker);
  containers.forEach((c) => c.closeLog());
  for (const c of cleanup) await c();
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
