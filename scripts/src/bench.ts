/**
 * `npm run bench`: batcher cycle time / CFS requests per cycle / peak RSS at 1k, 10k and 50k pending components,
 * sidecar /livez latency at 200 requests/s, and hang/crash detection with the manifest's probes. Several runs,
 * medians. Prints a table and writes bench-results/<date>.json and .md. Not part of `npm test`.
 *
 * Options: --runs N (default 3), --sizes 1000,10000,50000, --livez-seconds S (10),
 * --only cycle,livez,detect,false-restarts,soak (default: all), --soak N,A (components, ambiguous creates; default
 * 12000,1000; runs once whatever --runs says), --quick (one run, 1k only, 3 s of /livez, 3 detect runs, 30 s
 * conditions, a 600,60 soak), --detect-runs N (5 per hang kind), --conditions refused,503,... (all), --fr-seconds S (120: the
 * issue asks 1800 for outages, 600 for saturation), --check-interval S (10, the CFS default; false-restart pods),
 * --detect-interval S (1; detection pods).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runCycleBench, type CycleRun } from './bench-cycle';
import type { DetectRun } from './bench-detect';
import { CONDITIONS, type FalseRestartRun } from './bench-false-restarts';
import { parseConditions, runDetectBench, runFalseRestartBench, type HealthArgs } from './bench-health';
import { runLivezBench, type LivezRun } from './bench-livez';
import { ROOT } from './bench-procs';
import { runSoak, type SoakRun } from './bench-soak';
import { fmt, markdownTable, median, type Row } from './bench-stats';
import { loadPodSpec } from './pod-spec';

interface Args extends HealthArgs {
  runs: number;
  sizes: number[];
  livezSeconds: number;
  only: Set<string>;
  soak: { components: number; ambiguous: number };
}

export function parseBenchArgs(argv: readonly string[]): Args {
  const { values: v } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      runs: { type: 'string' },
      sizes: { type: 'string' },
      'livez-seconds': { type: 'string' },
      only: { type: 'string' },
      soak: { type: 'string' },
      'detect-runs': { type: 'string' },
      conditions: { type: 'string' },
      'fr-seconds': { type: 'string' },
      'check-interval': { type: 'string' },
      'detect-interval': { type: 'string' },
      quick: { type: 'boolean', default: false },
    },
  });
  const a: Args = {
    runs: 3,
    sizes: [1000, 10_000, 50_000],
    livezSeconds: 10,
    only: new Set(['cycle', 'livez', 'detect', 'false-restarts', 'soak']),
    soak: { components: 12_000, ambiguous: 1000 },
    detectRuns: 5,
    conditions: [...CONDITIONS],
    falseRestartSeconds: 120,
    checkIntervalS: 10,
    detectCheckIntervalS: 1,
  };
  if (v.quick) {
    a.runs = 1;
    a.sizes = [1000];
    a.livezSeconds = 3;
    a.detectRuns = 3;
    a.falseRestartSeconds = 30;
    a.soak = { components: 600, ambiguous: 60 };
  }
  if (v.soak !== undefined) {
    const [components, ambiguous] = v.soak.split(',').map(Number);
    a.soak = { components: components ?? 12_000, ambiguous: ambiguous ?? 1000 };
  }
  if (v.runs !== undefined) a.runs = Math.max(1, Number(v.runs));
  if (v.sizes !== undefined) a.sizes = v.sizes.split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  if (v['livez-seconds'] !== undefined) a.livezSeconds = Math.max(1, Number(v['livez-seconds']));
  if (v.only !== undefined) a.only = new Set(v.only.split(','));
  if (v['detect-runs'] !== undefined) a.detectRuns = Math.max(1, Number(v['detect-runs']));
  if (v.conditions !== undefined) a.conditions = parseConditions(v.conditions);
  if (v['fr-seconds'] !== undefined) a.falseRestartSeconds = Math.max(5, Number(v['fr-seconds']));
  if (v['check-interval'] !== undefined) a.checkIntervalS = Math.max(1, Number(v['check-interval']));
  if (v['detect-interval'] !== undefined) a.detectCheckIntervalS = Math.max(1, Number(v['detect-interval']));
  return a;
}

const ORIGINAL: Record<number, { requests?: string; cycle?: string; rss?: string }> = {
  10_000: { requests: '390', rss: '48' },
  50_000: { requests: '1935', cycle: '2.9 s', rss: '84' },
};

const log = (m: string): void => void process.stdout.write(`${m}\n`);

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const spec = loadPodSpec(ROOT);
  const nodeOptions = spec.containers['cfs-batcher']!.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
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
          const run = await runCycleBench(n, { nodeOptions, measureCycles: 5, log });
          cycle[n].push(run);
          log(`  cycle ${fmt(run.cycleMs, 0)} ms, ${fmt(run.requestsPerCycle)} requests/cycle, peak RSS ${fmt(run.peakRssMb)} MB ${JSON.stringify(run.byRoute)}`);
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
        log(`  p50 ${fmt(run.p50Ms, 2)} ms, p99 ${fmt(run.p99Ms, 2)} ms, ${run.failed} failed of ${run.sent}${run.failed ? ` ${JSON.stringify(run.failures)}` : ''}`);
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
      soak = await runSoak({ components, ambiguous, batchSize: 5, maxStartsPerSecond: 20, timeoutMs: 20 * 60_000, sidecar: true, killProbability: 0.04, log });
      log(`  ${JSON.stringify(soak)}`);
      if (!soak.finished || soak.overlaps > 0 || soak.notConfigured > 0) errors.push(`soak: ${JSON.stringify(soak)}`);
    } catch (err) {
      errors.push(`soak: ${(err as Error).message}`);
    }
  }

  const rows: Row[] = [];
  for (const n of Object.keys(cycle).map(Number)) {
    const runs = cycle[n]!;
    const o = ORIGINAL[n] ?? {};
    const k = `${n / 1000}k pending`;
    rows.push({ metric: `${k}: cycle time`, value: `${fmt(median(runs.map((r) => r.cycleMs ?? NaN)), 0)} ms`, runs: runs.map((r) => fmt(r.cycleMs, 0)).join(', '), original: o.cycle });
    rows.push({ metric: `${k}: CFS requests/cycle`, value: fmt(median(runs.map((r) => r.requestsPerCycle))), runs: runs.map((r) => fmt(r.requestsPerCycle)).join(', '), original: o.requests });
    rows.push({ metric: `${k}: batcher peak RSS (VmHWM)`, value: `${fmt(median(runs.map((r) => r.peakRssMb ?? NaN)))} MB`, runs: runs.map((r) => fmt(r.peakRssMb)).join(', '), original: o.rss ? `${o.rss} MB` : undefined });
    rows.push({ metric: `${k}: time until all in sessions`, value: `${fmt(median(runs.map((r) => r.fillSeconds)))} s`, runs: runs.map((r) => fmt(r.fillSeconds)).join(', ') });
  }
  if (livez.length > 0) {
    rows.push({ metric: 'sidecar /livez p50 @200 req/s', value: `${fmt(median(livez.map((r) => r.p50Ms ?? NaN)), 2)} ms`, runs: livez.map((r) => fmt(r.p50Ms, 2)).join(', ') });
    rows.push({ metric: 'sidecar /livez p99 @200 req/s', value: `${fmt(median(livez.map((r) => r.p99Ms ?? NaN)), 2)} ms`, runs: livez.map((r) => fmt(r.p99Ms, 2)).join(', ') });
    rows.push({ metric: 'sidecar /livez failed answers', value: String(median(livez.map((r) => r.failed))), runs: livez.map((r) => `${r.failed}/${r.sent}`).join(', ') });
  }
  rows.push(...healthRows);

  if (soak) {
    const k = `soak ${soak.components / 1000}k, ${soak.ambiguousInjected} ambiguous creates, ${soak.kills} SIGKILLs`;
    rows.push({ metric: `${k}: overlaps / not configured`, value: `${soak.overlaps} / ${soak.notConfigured}`, runs: `${soak.sessions} sessions, ${soak.seconds.toFixed(0)} s` });
    rows.push({ metric: `${k}: pending-timeout deletions / pending peak`, value: `${soak.pendingTimeoutDeletions} / ${soak.pendingPeak}`, runs: '1' });
    rows.push({ metric: `${k}: /livez failures`, value: soak.livezFailures === null ? 'no sidecar' : String(soak.livezFailures), runs: JSON.stringify(soak.livezReasons) });
  }

  const table = markdownTable(rows);
  const stamp = started.toISOString().replace(/[:]/g, '-').replace(/\..*$/, '');
  const outDir = path.join(ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const meta = { started: started.toISOString(), node: process.version, cpus: os.cpus().length, runs: args.runs, batcherNodeOptions: nodeOptions };
  writeFileSync(path.join(outDir, `${stamp}.json`), JSON.stringify({ meta, cycle, livez, detect, falseRestarts, soak, errors }, null, 2));
  const md = `# Benchmarks ${started.toISOString()}\n\nNode ${process.version}, ${meta.cpus} CPUs, ${args.runs} run(s) each, batcher NODE_OPTIONS=${nodeOptions}.\n\n${table}\n${errors.length ? `\nErrors:\n${errors.map((e) => `- ${e}`).join('\n')}\n` : ''}`;
  writeFileSync(path.join(outDir, `${stamp}.md`), md);
  log(`\n${table}\n\nwritten: bench-results/${stamp}.json and .md`);
  if (errors.length > 0) {
    log(`\n${errors.length} error(s):\n${errors.join('\n')}`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
