/**
 * The image check (`npm run images -- --check`, or `node scripts/dist/images-check.js`): runs each built image the
 * way the manifest does — read-only root, uid 65532, no capabilities — against a CFS simulator on 127.0.0.1 (host
 * network), with a host folder as the shared heartbeat volume (read-only for the sidecar). It shows that each
 * ENTRYPOINT starts as PID 1 and serves its port, that the batcher writes the heartbeat and the sidecar reads that
 * same heartbeat, and that each exits 0 on SIGTERM before the engine's 2 s SIGKILL. It measures what it shows.
 */
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readHeartbeat, setLogSilent, type Heartbeat } from '@cfs-batcher/shared';
import { createSimulator } from '@cfs-batcher/cfs-sim';
import { startCollector } from './images-collector';
import { entrypointNode, get, runHardened, stop, STOP_GRACE_SECONDS, UID, until } from './images-container';
import { type Engine, detectEngine, engineCall, imageSize, logsOf, pidOne, runFlags } from './images-engine';
import { freePort } from './net';

const ROOT = path.resolve(__dirname, '..', '..');
const MOUNT = '/var/run/cfs-batcher';

export interface ContainerFigures {
  image: string;
  sizeBytes: number;
  startToPortMs: number;
  /** batcher: to its first heartbeat past `starting`; sidecar: to /livez 200 on the batcher's heartbeat */
  startToHeartbeatMs: number;
  pidInContainer: number | null;
  /** uid of PID 1 as the host's /proc shows it (null with a remote engine) */
  uid: number | null;
  sigtermToExitMs: number;
  exitCode: number;
}

export interface CheckReport {
  engine: Engine;
  runFlags: string[];
  batcher: ContainerFigures | null;
  sidecar: ContainerFigures | null;
  /** spans the OTLP receiver got, per service.name (most are flushed at SIGTERM) */
  spans: Record<string, number>;
  problems: string[];
}

export interface CheckOptions {
  engine?: Engine;
  batcherImage: string;
  sidecarImage: string;
  /** extra `run` flags; detected (see runFlags) when absent */
  runFlags?: string[];
  deadlineMs?: number;
  /** added to both containers' environment (e.g. an OTLP endpoint, as the manifest's ConfigMap sets) */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export async function checkImages(opts: CheckOptions): Promise<CheckReport> {
  const engine = opts.engine ?? (await detectEngine<Engine>(['docker', 'podman']));
  if (!engine) throw new Error('no working docker or podman');
  const log = opts.log ?? (() => undefined);
  const deadline = opts.deadlineMs ?? 60_000;
  const flags =
    opts.runFlags ?? (await runFlags(engine, opts.batcherImage, await entrypointNode(engine, opts.batcherImage)));
  const report: CheckReport = { engine, runFlags: flags, batcher: null, sidecar: null, spans: {}, problems: [] };
  const names = {
    batcher: `cfs-images-check-batcher-${process.pid}`,
    sidecar: `cfs-images-check-sidecar-${process.pid}`,
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'images-check-'));
  const sim = createSimulator({ scenario: path.join(ROOT, 'cfs-sim', 'scenarios', 'demo.json') });
  const collector = await startCollector();
  // Tracing on, as the manifest's ConfigMap sets it, towards the receiver here.
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const problem = (p: string) => {
    report.problems.push(p);
    log(`PROBLEM ${p}`);
  };
  // The pod's fsGroup: the volume belongs to group 65532 and is group-writable.
  if (process.getuid?.() === 0) chownSync(dir, UID, UID);
  chmodSync(dir, 0o2775 | (process.getuid?.() === 0 ? 0 : 0o7));
  const run = async (name: string, image: string, env: Record<string, string>, volume: string) => {
    const started = await runHardened(engine, { name, image, env: { ...otel, ...opts.env, ...env }, volume, flags });
    if (!started.readOnly) problem(`${name}: root filesystem is not read-only`);
    return started.at;
  };
  try {
    await engineCall(engine, ['rm', '-f', names.batcher, names.sidecar]);
    const { url } = await sim.listen(0, '127.0.0.1');
    const hbFile = path.join(dir, 'heartbeat.json');

    // The batcher: serves /metrics, writes its heartbeat (pid 1 inside its container) on the shared folder.
    const metricsPort = await freePort();
    const tb = await run(
      names.batcher,
      opts.batcherImage,
      { CFS_API_URL: url, HEARTBEAT_PATH: `${MOUNT}/heartbeat.json`, METRICS_PORT: String(metricsPort) },
      `${dir}:${MOUNT}`,
    );
    await until('batcher /metrics', engine, names.batcher, deadline, async () =>
      (await get(metricsPort, '/metrics'))?.status === 200 ? true : null,
    );
    const bPort = performance.now() - tb;
    const hb = await until('a batcher heartbeat past starting', engine, names.batcher, deadline, async () => {
      const r = await readHeartbeat(hbFile);
      return r.ok && r.heartbeat.phase !== 'starting' ? r.heartbeat : null;
    });
    const bBeat = performance.now() - tb;
    log(
      `batcher: /metrics after ${Math.round(bPort)} ms, heartbeat (phase ${hb.phase}, pid ${hb.pid}) after ${Math.round(bBeat)} ms`,
    );
    if (hb.pid !== 1) problem(`batcher heartbeat pid is ${hb.pid}, not 1: node is not PID 1`);

    // The sidecar: serves /healthz, then judges the batcher's heartbeat through its read-only mount.
    const healthPort = await freePort();
    const ts = await run(
      names.sidecar,
      opts.sidecarImage,
      { CFS_API_URL: url, HEARTBEAT_PATH: `${MOUNT}/heartbeat.json`, HEALTH_PORT: String(healthPort) },
      `${dir}:${MOUNT}:ro`,
    );
    await until('sidecar /healthz', engine, names.sidecar, deadline, async () =>
      (await get(healthPort, '/healthz'))?.status === 200 ? true : null,
    );
    const sPort = performance.now() - ts;
    const seen = await until(
      'sidecar /livez 200 on the batcher heartbeat',
      engine,
      names.sidecar,
      deadline,
      async () => {
        if ((await get(healthPort, '/livez'))?.status !== 200) return null;
        const s = await get(healthPort, '/status');
        const st =
          s?.status === 200 ? (JSON.parse(s.body) as { heartbeat: Partial<Heartbeat> & { read: string } }) : null;
        return st?.heartbeat.read === 'ok' && st.heartbeat.instance_id === hb.instance_id ? st.heartbeat : null;
      },
    );
    const sBeat = performance.now() - ts;
    log(
      `sidecar: /healthz after ${Math.round(sPort)} ms, /livez 200 on heartbeat ${seen.instance_id} seq ${seen.sequence} after ${Math.round(sBeat)} ms`,
    );

    const figures = async (name: string, image: string, port: number, beat: number): Promise<ContainerFigures> => {
      const { pidInContainer, uid } = await pidOne(engine, name);
      if (pidInContainer !== null && pidInContainer !== 1) problem(`${name}: node is pid ${pidInContainer}, not 1`);
      if (uid !== null && uid !== UID) problem(`${name}: node runs as uid ${uid}, not ${UID}`);
      const s = await stop(engine, name);
      if (s.exitCode !== 0)
        problem(`${name}: exit code ${s.exitCode} after SIGTERM (137: killed after the ${STOP_GRACE_SECONDS} s grace)`);
      log(`${name}: SIGTERM -> exit ${s.exitCode} in ${Math.round(s.ms)} ms`);
      const logs = await logsOf(engine, name);
      if (process.env.IMAGES_CHECK_LOGS) log(`--- ${name} logs\n${logs}`);
      // a healthy start and stop against a healthy CFS logs no ERROR (a bug logs "Unexpected error occurred")
      const errors = logs.split('\n').filter((l) => l.includes('"level":"ERROR"'));
      if (errors.length > 0) problem(`${name} logged ERROR: ${errors.slice(0, 3).join(' | ').slice(0, 1000)}`);
      return {
        image,
        sizeBytes: await imageSize(engine, image),
        startToPortMs: port,
        startToHeartbeatMs: beat,
        pidInContainer,
        uid,
        sigtermToExitMs: s.ms,
        exitCode: s.exitCode,
      };
    };
    report.sidecar = await figures(names.sidecar, opts.sidecarImage, sPort, sBeat);
    report.batcher = await figures(names.batcher, opts.batcherImage, bPort, bBeat);
    report.spans = Object.fromEntries(collector.spans);
    for (const service of ['cfs-batcher', 'cfs-batcher-health']) {
      if (!collector.spans.get(service) && opts.env?.OTEL_SDK_DISABLED !== 'true')
        problem(`no span from ${service} reached the OTLP receiver`);
    }
  } catch (err) {
    problem(err instanceof Error ? err.message : String(err));
    for (const n of [names.batcher, names.sidecar])
      log(`--- ${n} logs (tail)\n${(await logsOf(engine, n)).slice(-3000)}`);
  } finally {
    await engineCall(engine, ['rm', '-f', names.batcher, names.sidecar]);
    await sim.close();
    await collector.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

function option(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? (argv[i + 1] as string) : fallback;
}

export const USAGE = `usage: node scripts/dist/images-check.js [--engine docker|podman] [--tag TAG] [--batcher IMAGE]
       [--sidecar IMAGE] [--env NAME=VALUE]... [--help]   (IMAGES_CHECK_LOGS=1 prints the containers' logs)`;

/** CLI: prints the figures as lines and one JSON object; exit 1 when something did not hold. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  const tag = option(argv, '--tag', '0.1.0');
  const engine = option(argv, '--engine', '');
  const detected = await detectEngine<Engine>(
    engine === 'docker' || engine === 'podman' ? [engine] : ['docker', 'podman'],
  );
  if (!detected) {
    console.error(`images-check: no working ${engine || 'docker or podman'}`);
    return 1;
  }
  setLogSilent(true); // the in-process simulator's lines would mix with the report
  const report = await checkImages({
    engine: detected,
    batcherImage: option(argv, '--batcher', `localhost/cfs-batcher:${tag}`),
    sidecarImage: option(argv, '--sidecar', `localhost/cfs-batcher-health-sidecar:${tag}`),
    env: Object.fromEntries(
      argv.flatMap((a, i) =>
        argv[i - 1] === '--env' && a.includes('=') ? [[a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]] : [],
      ),
    ),
    log: (l) => console.error(`images-check: ${l}`),
  });
  console.log(JSON.stringify(report, null, 2));
  console.error(
    report.problems.length === 0 ? 'images-check: OK' : `images-check: ${report.problems.length} problem(s)`,
  );
  return report.problems.length === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`images-check: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
