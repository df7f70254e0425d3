/** `npm run bench` options and usage, from one declaration (BENCH_CLI); bench.ts says what each part measures. */
import { cliErrorMessage, parseCli, type CliSpec } from '@cfs-batcher/shared/cli';
import { CONVERGE_OPERATORS, type ConvergeOperator } from './bench-converge';
import { CONDITIONS } from './bench-false-restarts';
import { parseConditions, type HealthArgs } from './bench-health';

export const BENCH_CLI: CliSpec = {
  command: 'node scripts/dist/bench.js',
  summary: [
    'Benchmarks (npm run bench): batcher cycle time, CFS requests and RSS per cycle, explain latency, runtime floor,',
    'sidecar /livez latency, hang and stall detection, false restarts, a soak. Writes bench-results/<date>.json and .md.',
  ].join('\n'),
  options: {
    runs: { type: 'string', value: 'N', help: 'runs per measurement, medians reported (default 3)' },
    sizes: { type: 'string', value: 'LIST', help: 'pending components (default 1000,10000,50000,100000)' },
    'livez-seconds': { type: 'string', value: 'S', help: 'seconds of /livez load at 200 requests/s (default 10)' },
    only: {
      type: 'string',
      value: 'LIST',
      help: 'parts: cycle,explain,floor,livez,detect,never-send,false-restarts,soak (default all) or converge',
    },
    soak: { type: 'string', value: 'N,A', help: 'soak components and ambiguous creates (default 12000,1000)' },
    'detect-runs': { type: 'string', value: 'N', help: 'pods per hang kind (default 5)' },
    conditions: { type: 'string', value: 'LIST', help: 'false-restart conditions (default all: refused,503,...)' },
    'fr-seconds': { type: 'string', value: 'S', help: 'seconds per false-restart condition (default 120)' },
    'check-interval': { type: 'string', value: 'S', help: 'batcher_check_interval of false-restart pods (default 10)' },
    'detect-interval': { type: 'string', value: 'S', help: 'batcher_check_interval of detection pods (default 1)' },
    transport: { type: 'string', value: 'T', help: "the simulator's transport in the cycle bench: nodelay or python" },
    'node-options': { type: 'string', value: 'OPTS', help: "the batcher's NODE_OPTIONS instead of the manifest's" },
    'node-flags': { type: 'string', value: 'FLAGS', help: "node flags instead of the batcher image's ENTRYPOINT ones" },
    'floor-page-size': { type: 'string', value: 'N', help: 'page size of the runtime-floor reader (default 1000)' },
    'no-rebuild': { type: 'boolean', help: "skip the cycle bench's restart measurement" },
    tracing: { type: 'boolean', help: 'cycle bench with tracing on, spans exported to a local OTLP sink' },
    batcher: { type: 'string', value: 'PATH', help: "another build's batcher entry (before/after runs)" },
    'no-limits': {
      type: 'boolean',
      help: "run the batcher outside the manifest's CPU and memory limits (by default a cgroup holds it to them)",
    },
    quick: { type: 'boolean', help: 'one run, 1k only, 3 s of /livez, 3 detect runs, 30 s conditions, small soak' },
    operators: { type: 'string', value: 'LIST', help: 'converge: prompt,slow (default both)' },
    pacing: { type: 'string', value: 'LIST', help: 'converge: on,off (default both)' },
  },
  exitCodes: [
    [0, 'every part measured (or --help)'],
    [1, 'a part failed (listed at the end) or the bench crashed'],
    [2, 'a bad argument'],
  ],
};

export class BenchUsageError extends Error {}

export interface Args extends HealthArgs {
  /** --help: print the usage and exit 0. */
  help: boolean;
  runs: number;
  sizes: number[];
  livezSeconds: number;
  only: Set<string>;
  soak: { components: number; ambiguous: number };
  /** The simulator's transport in the cycle bench (cfs-sim/README.md). */
  transport: 'nodelay' | 'python';
  /** The batcher's NODE_OPTIONS instead of the manifest's. */
  nodeOptions?: string;
  /** Node/V8 flags on the batcher's command line for a comparison run (space-separated; the image has none). */
  nodeFlags?: string[];
  /** Page size of the runtime-floor reader (CFS's default 1000, what the batcher asks). */
  floorPageSize: number;
  /** Measure a restart's rebuild in the cycle bench. */
  rebuild: boolean;
  /** Another build's batcher entry, relative to the repository (back-to-back before/after runs). */
  batcherScript?: string;
  /** Cycle bench with tracing on: spans exported over OTLP/HTTP to a local sink. */
  tracing: boolean;
  /** The batcher inside the manifest's CPU and memory limits (pod-limits.ts; needs root); off with --no-limits. */
  limits: boolean;
  /** The convergence bench's matrix: sizes (--sizes when given), operators, pacing on (shipped) and/or off. */
  converge: { sizes: number[]; operators: ConvergeOperator[]; pacing: Array<'on' | 'off'> };
}

export function parseBenchArgs(argv: readonly string[]): Args {
  return checked(() => readBenchArgs(argv));
}

/** A bad value is a usage error too (exit 2). */
function checked(read: () => Args): Args {
  try {
    return read();
  } catch (err) {
    throw err instanceof BenchUsageError ? err : new BenchUsageError((err as Error).message);
  }
}

function readBenchArgs(argv: readonly string[]): Args {
  let parsed;
  try {
    parsed = parseCli(BENCH_CLI, argv);
  } catch (err) {
    throw new BenchUsageError(`${cliErrorMessage(err)} (--help lists the options)`);
  }
  const v = parsed.values as Record<string, string | undefined> & {
    'no-rebuild'?: boolean;
    'no-limits'?: boolean;
    tracing?: boolean;
    quick?: boolean;
  };
  const a: Args = {
    help: parsed.help,
    runs: 3,
    sizes: [1000, 10_000, 50_000, 100_000],
    livezSeconds: 10,
    only: new Set(['cycle', 'explain', 'floor', 'livez', 'detect', 'never-send', 'false-restarts', 'soak']),
    soak: { components: 12_000, ambiguous: 1000 },
    detectRuns: 5,
    conditions: [...CONDITIONS],
    falseRestartSeconds: 120,
    checkIntervalS: 10,
    detectCheckIntervalS: 1,
    transport: 'nodelay',
    rebuild: !v['no-rebuild'],
    floorPageSize: v['floor-page-size'] !== undefined ? Number(v['floor-page-size']) : 1000,
    tracing: v.tracing === true,
    limits: !v['no-limits'],
    converge: { sizes: [10_000, 50_000, 100_000], operators: ['prompt', 'slow'], pacing: ['on', 'off'] },
    ...(v['node-options'] !== undefined ? { nodeOptions: v['node-options'] } : {}),
    ...(v['node-flags'] !== undefined ? { nodeFlags: v['node-flags'].split(/\s+/).filter(Boolean) } : {}),
    ...(v.batcher !== undefined ? { batcherScript: v.batcher } : {}),
  };
  if (!Number.isInteger(a.floorPageSize) || a.floorPageSize < 1)
    throw new Error(`--floor-page-size must be a positive integer, not ${v['floor-page-size']}`);
  if (v.transport !== undefined) {
    if (v.transport !== 'nodelay' && v.transport !== 'python')
      throw new Error(`--transport must be nodelay or python, not ${v.transport}`);
    a.transport = v.transport;
  }
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
  if (v.sizes !== undefined)
    a.sizes = v.sizes
      .split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
  if (v.sizes !== undefined) a.converge.sizes = a.sizes;
  if (v.operators !== undefined)
    a.converge.operators = listOf(v.operators, Object.keys(CONVERGE_OPERATORS), '--operators');
  if (v.pacing !== undefined) a.converge.pacing = listOf(v.pacing, ['on', 'off'], '--pacing');
  if (v['livez-seconds'] !== undefined) a.livezSeconds = Math.max(1, Number(v['livez-seconds']));
  if (v.only !== undefined) a.only = new Set(v.only.split(','));
  if (v['detect-runs'] !== undefined) a.detectRuns = Math.max(1, Number(v['detect-runs']));
  if (v.conditions !== undefined) a.conditions = parseConditions(v.conditions);
  if (v['fr-seconds'] !== undefined) a.falseRestartSeconds = Math.max(5, Number(v['fr-seconds']));
  if (v['check-interval'] !== undefined) a.checkIntervalS = Math.max(1, Number(v['check-interval']));
  if (v['detect-interval'] !== undefined) a.detectCheckIntervalS = Math.max(1, Number(v['detect-interval']));
  return a;
}

/** A comma list whose every item is one of `allowed`; anything else is refused with what is allowed. */
function listOf<T extends string>(text: string, allowed: readonly string[], flag: string): T[] {
  const items = text.split(',').filter(Boolean);
  const bad = items.filter((x) => !allowed.includes(x));
  if (bad.length > 0 || items.length === 0)
    throw new Error(`${flag} takes a comma list of ${allowed.join(', ')}, not ${text}`);
  return items as T[];
}
