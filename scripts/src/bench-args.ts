/** `npm run bench` options (util.parseArgs); see bench.ts for what each part measures. */
import { parseArgs } from 'node:util';
import { CONVERGE_OPERATORS, type ConvergeOperator } from './bench-converge';
import { CONDITIONS } from './bench-false-restarts';
import { parseConditions, type HealthArgs } from './bench-health';

export interface Args extends HealthArgs {
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
      transport: { type: 'string' },
      'node-options': { type: 'string' },
      'node-flags': { type: 'string' },
      'floor-page-size': { type: 'string' },
      'no-rebuild': { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
      batcher: { type: 'string' },
      quick: { type: 'boolean', default: false },
      operators: { type: 'string' },
      pacing: { type: 'string' },
      'no-limits': { type: 'boolean', default: false },
    },
  });
  const a: Args = {
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
