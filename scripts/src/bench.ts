/**
 * `npm run bench`: batcher cycle time / CFS requests per cycle / peak RSS at 1k, 10k and 50k pending components,
 * sidecar /livez latency at 200 requests/s, and hang/crash detection with the manifest's probes. Several runs,
 * medians. Prints a table and writes bench-results/<date>.json and .md. Not part of `npm test`.
 *
 * Options: --runs N (default 3), --sizes 1000,10000,50000,100000, --livez-seconds S (10),
 * --only cycle,livez,detect,false-restarts,soak (default: all), --soak N,A (components, ambiguous creates; default
 * 12000,1000; runs once whatever --runs says), --quick (one run, 1k only, 3 s of /livez, 3 detect runs, 30 s
 * conditions, a 600,60 soak), --detect-runs N (5 per hang kind), --conditions refused,503,... (all), --fr-seconds S (120: the
 * issue asks 1800 for outages, 600 for saturation), --check-interval S (10, the CFS default; false-restart pods),
 * --detect-interval S (1; detection pods), --transport nodelay|python (the simulator's, cycle bench),
 * --node-options="..." (written with =, the batcher's, instead of the manifest's), --no-rebuild (skip the restart measurement),
 * --batcher PATH (another build's entry script, relative to the repository, for back-to-back before/after runs),
 * --tracing (cycle bench with the tracing SDK on, spans exported to a local OTLP sink).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBenchArgs } from './bench-args';
import { runCycleBench, type CycleRun } from './bench-cycle';
import type { DetectRun } from './bench-detect';
import type { FalseRestartRun } from './bench-false-restarts';
import { runDetectBench, runFalseRestartBench } from './bench-health';
import { runLivezBench, type LivezRun } from './bench-livez';
import { ROOT } from './bench-procs';
import { runSoak, type SoakRun } from './bench-soak';
import { fmt, markdownTable, median, range, type Row } from './bench-stats';
import { loadPodSpec } from './pod-spec';

export { parseBenchArgs } from './bench-args';

const ORIGINAL: Record<
  number,
  { requests?: string; busy?: string; cpu?: string; bytes?: string; perMin?: string; rss?: string; first?: string }
> = {
  10_000: { requests: '390', busy: '0.99 s', rss: '48.5' },
  50_000: {
    requests: '1935',
    busy: '4.72 s',
    cpu: '~3.6 s (75.5 CPU-s / 120 s, 5.7 s cycles)',
    bytes: '33.9 MB',
    perMin: '354 MB',
    rss: '84',
    first: '11.8 s',
  },
};

const log = (m: string): void => void process.stdout.write(`${m}\n`);

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const spec = loadPodSpec(ROOT);
  const nodeOptions =
    args.nodeOptions ?? spec.containers['cfs-batcher']!.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  const started = new Date();
  const cycle: Record<number, CycleRun[]> = {};
  const livez: LivezRun[] = [];
  let detect: DetectRun[] = [];
  let falseRestarts: FalseRestartRun[] = [];
  const healthRows: Row[] = [];
  const errors: string[] = [];
  let soak: SoakRun | null = null;

  if (args.only.has('cycle')) {
    for (const n of args.sizes) {
      cycle[n] = [];
      for (let r = 0; r < args.runs; r++) {
        log(`cycle bench: ${n} pending components, run ${r + 1}/${args.runs}`);
        try {
          log(
            `  uptime: ${os
              .loadavg()
              .map((x) => x.toFixed(2))
              .join(' ')}`,
          );
          const run = await runCycleBench(n, {
            nodeOptions,
            measureCycles: 5,
            log,
            transport: args.transport,
            rebuild: args.rebuild,
            tracing: args.tracing,
            batcherScript: args.batcherScript,
          });
          cycle[n].push(run);
          log(
            `  busy ${fmt(run.cycleMs, 0)} ms, cpu ${fmt(run.cpuPerCycleS, 2)} s, ${fmt(run.requestsPerCycle)} requests and ` +
              `${fmt(run.bytesPerCycle / 1e6, 2)} MB/cycle (${fmt(run.bytesPerMinute / 1e6)} MB/min), peak RSS ${fmt(run.peakRssMb)} MB, ` +
              `first cycle ${fmt(run.firstCycleMs, 0)} ms (${fmt(run.fillCpuS, 2)} CPU-s to fill), rebuild ${fmt(run.rebuildWallS, 2)} s ${JSON.stringify(run.byRoute)}`,
          );
        } catch (err) {
          errors.push(`cycle ${n} run ${r + 1}: ${(err as Error).message}`);
          log(`  FAILED: ${(err as Error).message}`);
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

  const rows: Row[] = [];
  for (const n of Object.keys(cycle).map(Number)) rows.push(...cycleRows(n, cycle[n]!));
  if (livez.length > 0) {
    rows.push({
      metric: 'sidecar /livez p50 @200 req/s',
      value: `${fmt(median(livez.map((r) => r.p50Ms ?? NaN)), 2)} ms`,
      runs: livez.map((r) => fmt(r.p50Ms, 2)).join(', '),
    });
    rows.push({
      metric: 'sidecar /livez p99 @200 req/s',
      value: `${fmt(median(livez.map((r) => r.p99Ms ?? NaN)), 2)} ms`,
      runs: livez.map((r) => fmt(r.p99Ms, 2)).join(', '),
    });
    rows.push({
      metric: 'sidecar /livez failed answers',
      value: String(median(livez.map((r) => r.failed))),
      runs: livez.map((r) => `${r.failed}/${r.sent}`).join(', '),
    });
  }
  rows.push(...healthRows);

  if (soak) {
    const k = `soak ${soak.components / 1000}k, ${soak.ambiguousInjected} ambiguous creates, ${soak.kills} SIGKILLs`;
    rows.push({
      metric: `${k}: overlaps / not configured`,
      value: `${soak.overlaps} / ${soak.notConfigured}`,
      runs: `${soak.sessions} sessions, ${soak.seconds.toFixed(0)} s`,
    });
    rows.push({
      metric: `${k}: pending-timeout deletions / pending peak`,
      value: `${soak.pendingTimeoutDeletions} / ${soak.pendingPeak}`,
      runs: '1',
    });
    rows.push({
      metric: `${k}: /livez failures`,
      value: soak.livezFailures === null ? 'no sidecar' : String(soak.livezFailures),
      runs: JSON.stringify(soak.livezReasons),
    });
  }

  const table = markdownTable(rows);
  const stamp = started.toISOString().replace(/[:]/g, '-').replace(/\..*$/, '');
  const outDir = path.join(ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const meta = {
    started: started.toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    runs: args.runs,
    batcherNodeOptions: nodeOptions,
    simTransport: args.transport,
    tracing: args.tracing,
    batcher: args.batcherScript ?? 'batcher/dist/main.js',
  };
  writeFileSync(
    path.join(outDir, `${stamp}.json`),
    JSON.stringify({ meta, cycle, livez, detect, falseRestarts, soak, errors }, null, 2),
  );
  const md = `# Benchmarks ${started.toISOString()}\n\nNode ${process.version}, ${meta.cpus} CPUs, ${args.runs} run(s) each, batcher NODE_OPTIONS=${nodeOptions}, simulator transport ${args.transport}, tracing ${args.tracing ? 'on (OTLP/HTTP to a local sink)' : 'off'}.\n\n${table}\n${errors.length ? `\nErrors:\n${errors.map((e) => `- ${e}`).join('\n')}\n` : ''}`;
  writeFileSync(path.join(outDir, `${stamp}.md`), md);
  log(`\n${table}\n\nwritten: bench-results/${stamp}.json and .md`);
  if (errors.length > 0) {
    log(`\n${errors.length} error(s):\n${errors.join('\n')}`);
    process.exitCode = 1;
  }
}

/** One row per cycle figure: median (min-max) over the runs. */
function cycleRows(n: number, runs: readonly CycleRun[]): Row[] {
  const o = ORIGINAL[n] ?? {};
  const k = `${n / 1000}k pending`;
  const row = (metric: string, xs: number[], unit: string, digits: number, original?: string): Row => ({
    metric: `${k}: ${metric}`,
    value: `${fmt(median(xs), digits)}${unit} (${range(xs, digits)})`,
    runs: xs.map((x) => fmt(x, digits)).join(', '),
    original,
  });
  const of = (f: (r: CycleRun) => number | null): number[] => runs.map((r) => f(r) ?? NaN);
  const sessions = median(runs.map((r) => r.sessions)) ?? 0;
  return [
    row(
      'CFS requests per steady cycle',
      of((r) => r.requestsPerCycle),
      '',
      1,
      o.requests,
    ),
    row(
      'busy time per steady cycle',
      of((r) => r.cycleMs),
      ' ms',
      0,
      o.busy,
    ),
    row(
      'batcher CPU per steady cycle',
      of((r) => r.cpuPerCycleS),
      ' s',
      2,
      o.cpu,
    ),
    row(
      'bytes from CFS per steady cycle',
      of((r) => r.bytesPerCycle / 1e6),
      ' MB',
      2,
      o.bytes,
    ),
    row(
      'bytes from CFS per minute',
      of((r) => r.bytesPerMinute / 1e6),
      ' MB',
      1,
      o.perMin,
    ),
    row(
      'first cycle (creates)',
      of((r) => r.firstCycleMs),
      ' ms',
      0,
      o.first,
    ),
    row(
      'time until all in sessions',
      of((r) => r.fillSeconds),
      ' s',
      1,
    ),
    row(
      'batcher CPU until all in sessions',
      of((r) => r.fillCpuS),
      ' s',
      2,
    ),
    row(
      'batcher peak RSS (VmHWM)',
      of((r) => r.peakRssMb),
      ' MB',
      1,
      o.rss ? `${o.rss} MB` : undefined,
    ),
    row(
      `restart with ${sessions} sessions in flight -> rebuilt`,
      of((r) => r.rebuildWallS),
      ' s',
      2,
    ),
  ];
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
