/**
 * What a bench run leaves behind: `bench-results/<start>.json` (every run's figures, with the settings they were
 * measured under) and `.md` (the settings and the table), and the table on standard output.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './bench-procs';
import { markdownTable, type Row } from './bench-stats';
import type { Limits } from './pod-limits';

/** The settings every figure of a run was measured under. */
export interface BenchSettings {
  started: Date;
  runs: number;
  nodeOptions: string;
  nodeFlags: string[];
  runtimeEnv: Record<string, string>;
  transport: string;
  tracing: boolean;
  batcherScript: string | undefined;
  /** The container limits the batcher ran inside (the manifest's), or none (--no-limits). */
  limits: Limits | undefined;
}

/** Writes the two files; returns the table and the files' common stem (relative to the repository). */
export function writeBenchReport(
  s: BenchSettings,
  figures: Record<string, unknown>,
  rows: Row[],
  errors: readonly string[],
): { table: string; stem: string } {
  const table = markdownTable(rows);
  const stamp = s.started.toISOString().replace(/[:]/g, '-').replace(/\..*$/, '');
  const outDir = path.join(ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const meta = {
    started: s.started.toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    runs: s.runs,
    batcherNodeOptions: s.nodeOptions,
    batcherNodeFlags: s.nodeFlags,
    batcherRuntimeEnv: s.runtimeEnv,
    simTransport: s.transport,
    tracing: s.tracing,
    batcher: s.batcherScript ?? 'batcher/dist/main.js',
    batcherLimits: s.limits ?? null,
  };
  writeFileSync(path.join(outDir, `${stamp}.json`), JSON.stringify({ meta, ...figures, errors }, null, 2));
  const settings =
    `Node ${process.version}, ${meta.cpus} CPUs, ${s.runs} run(s) each, batcher NODE_OPTIONS=${s.nodeOptions}, ` +
    `node flags ${s.nodeFlags.join(' ') || '(none)'}, ${JSON.stringify(s.runtimeEnv)}, simulator transport ` +
    `${s.transport}, tracing ${s.tracing ? 'on (OTLP/HTTP to a local sink)' : 'off'}, batcher limits ` +
    `${s.limits ? `${s.limits.cpus ?? '-'} CPU, ${(s.limits.memoryBytes ?? NaN) / 2 ** 20} MiB` : 'none'}.`;
  const errorList = errors.length ? `\nErrors:\n${errors.map((e) => `- ${e}`).join('\n')}\n` : '';
  writeFileSync(
    path.join(outDir, `${stamp}.md`),
    `# Benchmarks ${s.started.toISOString()}\n\n${settings}\n\n${table}\n${errorList}`,
  );
  return { table, stem: `bench-results/${stamp}` };
}
