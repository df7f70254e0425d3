/**
 * `npm run bench`: batcher cycle time / CFS requests per cycle / peak RSS at 1k, 10k, 50k and 100k pending
 * components, `GET /explain/{id}` latency during a cycle at the largest size (bench-explain.ts), the runtime's floor at the same sizes (bench-floor.ts), sidecar /livez latency at 200 requests/s, and
 * hang/crash detection with the manifest's probes. Several runs, medians. Prints a table and writes
 * bench-results/<date>.json and .md. Not part of `npm test`.
 *
 * Options (BENCH_CLI in bench-args.ts, printed by --help): --runs N (default 3), --sizes 1000,10000,50000,100000, --livez-seconds S (10),
 * --only cycle,explain,floor,livez,detect,never-send,false-restarts,soak (default: all; never-send: a loop that stops
 * creating sessions, CSM's options, --detect-runs pods), --soak N,A (components, ambiguous creates; default
 * 12000,1000; runs once whatever --runs says), --quick (one run, 1k only, 3 s of /livez, 3 detect runs, 30 s
 * conditions, a 600,60 soak), --detect-runs N (5 per hang kind), --conditions refused,503,... (all), --fr-seconds S (120: the
 * issue asks 1800 for outages, 600 for saturation), --check-interval S (10, the CFS default; false-restart pods),
 * --detect-interval S (1; detection pods), --transport nodelay|python (the simulator's, cycle bench),
 * --node-options="..." (written with =, the batcher's, instead of the manifest's), --node-flags="..." (command-line
 * node flags for a comparison run; the image starts plain node), --no-rebuild (skip the restart measurement),
 * --batcher PATH (another build's entry script, relative to the repository, for back-to-back before/after runs),
 * --tracing (cycle bench with the tracing SDK on, spans exported to a local OTLP sink), --no-limits (the batcher
 * outside the manifest's resources.limits: by default the cycle, explain, convergence and cpu-limit-100k benches
 * run it in a cgroup with the container's CPU quota and memory limit, which needs root; pod-limits.ts).
 * --only converge (not in the default run: the full matrix takes tens of minutes): time and batcher CPU from start
 * until every component is in a session (bench-converge.ts) at 10k, 50k and 100k (or --sizes), against the operator
 * shapes of bench-converge-shapes.ts (--operators prompt,slow by default; stop and jump too), shipped pacing and none
 * (--pacing on,off); --runs applies.
 */
import '@cfs-batcher/shared/node-check';
import { BENCH_CLI, BenchUsageError, parseBenchArgs } from './bench-args';
import { cliUsage } from '@cfs-batcher/shared/cli';
import { runConvergeMatrix, type ConvergeRun } from './bench-converge';
import { runCycleBench, type CycleRun } from './bench-cycle';
import type { DetectRun } from './bench-detect';
import type { FalseRestartRun } from './bench-false-restarts';
import { runExplainBench, type ExplainRun } from './bench-explain';
import { runDetectBench, runFalseRestartBench, runNeverSendBench } from './bench-health';
import type { StallRun } from './bench-stall';
import { runLivezBench, type LivezRun } from './bench-livez';
import { loadAverageText, ROOT } from './bench-procs';
import { runSoak, type SoakRun } from './bench-soak';
import { runFloorBench, type FloorRun } from './bench-floor';
import { explainLine, explainRows } from './bench-explain-rows';
import { convergeRows, cycleRows, floorRows, livezRows, soakRows } from './bench-rows';
import { writeBenchReport } from './bench-report';
import { fmt, type Row } from './bench-stats';
import { loadPodSpec } from './pod-spec';

export { parseBenchArgs } from './bench-args';

const log = (m: string): void => void process.stdout.write(`${m}\n`);

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(cliUsage(BENCH_CLI));
    return;
  }
  const spec = loadPodSpec(ROOT);
  const nodeOptions =
    args.nodeOptions ?? spec.containers['cfs-batcher']!.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  // Runtime tuning the container gets besides NODE_OPTIONS: glibc's and libuv's variables (docs/deployment.md).
  const runtimeEnv = Object.fromEntries(
    spec.containers['cfs-batcher']!.env.filter((e) => /^(MALLOC_|UV_)/.test(e.name)).map((e) => [e.name, e.value]),
  );
  // The image runs plain `node <script>`; --node-flags adds flags for a comparison run.
  const nodeFlags = args.nodeFlags ?? [];
  const limits = args.limits ? spec.containers['cfs-batcher']!.limits : undefined;
  const started = new Date();
  const cycle: Record<number, CycleRun[]> = {};
  const floor: Record<number, FloorRun[]> = {};
  const livez: LivezRun[] = [];
  const explain: ExplainRun[] = [];
  let detect: DetectRun[] = [];
  let falseRestarts: FalseRestartRun[] = [];
  let neverSend: StallRun[] = [];
  const healthRows: Row[] = [];
  const errors: string[] = [];
  let soak: SoakRun | null = null;
  const converge: ConvergeRun[] = [];

  log(`load average at start: ${loadAverageText()}`);
  if (args.only.has('cycle')) {
    for (const n of args.sizes) {
      cycle[n] = [];
      for (let r = 0; r < args.runs; r++) {
        log(`cycle bench: ${n} pending components, run ${r + 1}/${args.runs}`);
        try {
          log(`  uptime: ${loadAverageText()}`);
          const run = await runCycleBench(n, {
            nodeOptions,
            runtimeEnv,
            nodeFlags,
            measureCycles: 5,
            log,
            transport: args.transport,
            rebuild: args.rebuild,
            tracing: args.tracing,
            batcherScript: args.batcherScript,
            ...(limits ? { limits } : {}),
          });
          cycle[n].push(run);
          log(
            `  busy ${fmt(run.cycleMs, 0)} ms, cpu ${fmt(run.cpuPerCycleS, 2)} s, ${fmt(run.requestsPerCycle)} requests and ` +
              `${fmt(run.bytesPerCycle / 1e6, 2)} MB/cycle (${fmt(run.bytesPerMinute / 1e6)} MB/min), peak RSS ${fmt(run.peakRssMb)} MB, ` +
              `cgroup peak ${fmt(run.cgroupPeakMb)} MB, OOM kills ${run.oomKills ?? '-'}, first heartbeat ${fmt(run.firstBeatMs, 0)} ms, first cycle ${fmt(run.firstCycleMs, 0)} ms (${fmt(run.fillCpuS, 2)} CPU-s to fill), rebuild ${fmt(run.rebuildWallS, 2)} s ${JSON.stringify(run.byRoute)}`,
          );
        } catch (err) {
          errors.push(`cycle ${n} run ${r + 1}: ${(err as Error).message}`);
          log(`  FAILED: ${(err as Error).message}`);
        }
      }
    }
  }
  if (args.only.has('explain')) {
    const n = Math.max(...args.sizes);
    for (let r = 0; r < args.runs; r++) {
      log(`explain bench: ${n} pending components, requests during a cycle, run ${r + 1}/${args.runs}`);
      try {
        const run = await runExplainBench(n, {
          requests: args.sizes.length === 1 && n <= 1000 ? 200 : 1000,
          cycles: 3,
          rateHz: 50,
          timeLimitMs: 180_000,
          nodeOptions,
          runtimeEnv,
          nodeFlags,
          batcherScript: args.batcherScript,
          ...(limits ? { limits } : {}),
          log,
        });
        explain.push(run);
        log(`  ${explainLine(run)}`);
      } catch (err) {
        errors.push(`explain ${n} run ${r + 1}: ${(err as Error).message}`);
        log(`  FAILED: ${(err as Error).message}`);
      }
    }
  }
  if (args.only.has('floor')) {
    for (const n of args.sizes) {
      floor[n] = [];
      for (let r = 0; r < args.runs; r++) {
        try {
          const run = await runFloorBench(n, { nodeOptions, runtimeEnv, nodeFlags, pageSize: args.floorPageSize });
          floor[n].push(run);
          log(
            `floor ${n}, run ${r + 1}/${args.runs}: node alone ${fmt(run.bareMb)} MB, least reader ${fmt(run.readMb)} MB`,
          );
        } catch (err) {
          errors.push(`floor ${n} run ${r + 1}: ${(err as Error).message}`);
        }
      }
    }
  }
  if (args.only.has('livez')) {
    for (let r = 0; r < args.runs; r++) {
      log(`livez bench: 200 requests/s for ${args.livezSeconds} s, run ${r + 1}/${args.runs}`);
      try {
        const run = await runLivezBench({ rate: 200, seconds: args.livezSeconds });
        livez.push(run);
        log(
          `  p50 ${fmt(run.p50Ms, 2)} ms, p99 ${fmt(run.p99Ms, 2)} ms, ${run.failed} failed of ${run.sent}${run.failed ? ` ${JSON.stringify(run.failures)}` : ''}`,
        );
      } catch (err) {
        errors.push(`livez run ${r + 1}: ${(err as Error).message}`);
      }
    }
  }
  if (args.only.has('detect')) {
    const r = await runDetectBench(args, log, errors);
    detect = r.runs;
    healthRows.push(...r.rows);
  }
  if (args.only.has('never-send')) {
    const r = await runNeverSendBench(args, log, errors);
    neverSend = r.runs;
    healthRows.push(...r.rows);
  }
  if (args.only.has('false-restarts')) {
    const r = await runFalseRestartBench(args, log, errors);
    falseRestarts = r.runs;
    healthRows.push(...r.rows);
  }

  if (args.only.has('soak')) {
    const { components, ambiguous } = args.soak;
    log(`soak: ${ambiguous} ambiguous creates over ${components} components, slow operator, SIGKILLs in flight`);
    try {
      soak = await runSoak({
        components,
        ambiguous,
        batchSize: 5,
        maxStartsPerSecond: 20,
        timeoutMs: 20 * 60_000,
        sidecar: true,
        killProbability: 0.04,
        log,
      });
      log(`  ${JSON.stringify(soak)}`);
      if (!soak.finished || soak.overlaps > 0 || soak.notConfigured > 0) errors.push(`soak: ${JSON.stringify(soak)}`);
    } catch (err) {
      errors.push(`soak: ${(err as Error).message}`);
    }
  }

  if (args.only.has('converge'))
    converge.push(
      ...(await runConvergeMatrix(
        { ...args.converge, runs: args.runs },
        {
          nodeOptions,
          runtimeEnv,
          nodeFlags,
          batcherScript: args.batcherScript,
          timeoutMs: 15 * 60_000,
          steadyCycles: 5,
          log,
          ...(limits ? { limits } : {}),
        },
        errors,
      )),
    );

  const rows: Row[] = [];
  rows.push(...convergeRows(converge));
  for (const n of Object.keys(cycle).map(Number)) rows.push(...cycleRows(n, cycle[n]!));
  for (const n of Object.keys(floor).map(Number)) rows.push(...floorRows(n, floor[n]!));
  rows.push(...livezRows(livez));
  rows.push(...explainRows(explain));
  rows.push(...healthRows);

  if (soak) rows.push(...soakRows(soak));

  log(`load average at end: ${loadAverageText()}`);
  const { table, stem } = writeBenchReport(
    {
      started,
      runs: args.runs,
      nodeOptions,
      nodeFlags,
      runtimeEnv,
      transport: args.transport,
      tracing: args.tracing,
      batcherScript: args.batcherScript,
      limits,
    },
    { cycle, explain, floor, livez, detect, neverSend, falseRestarts, soak, converge },
    rows,
    errors,
  );
  log(`\n${table}\n\nwritten: ${stem}.json and .md`);
  if (errors.length > 0) {
    log(`\n${errors.length} error(s):\n${errors.join('\n')}`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    if (err instanceof BenchUsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
