/** The local pod's command line: options, defaults and the usage text (node's util.parseArgs). */
import { parseArgs as parseArgv } from 'node:util';

export interface LocalPodArgs {
  durationS: number | null;
  quiet: boolean;
  freePorts: boolean;
  scenario: string;
  simPort: number;
  checkInterval: number;
  batchWindow: number;
  /** Each container inside its manifest's CPU and memory limits (pod-limits.ts; needs root). */
  limits: boolean;
}

export class UsageError extends Error {}

const USAGE = `usage: node scripts/dist/local-pod.js [--duration SECONDS] [--quiet] [--free-ports]
       [--scenario FILE] [--sim-port PORT] [--check-interval S] [--batch-window S] [--limits]`;

function intArg(flag: string, raw: string | undefined, min: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new UsageError(`--${flag} needs an integer >= ${min}`);
  return Number(raw);
}

/** Pure: argv (without node and script) -> options. */
export function parseArgs(argv: readonly string[]): LocalPodArgs {
  let values;
  try {
    ({ values } = parseArgv({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        duration: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        'free-ports': { type: 'boolean', default: false },
        scenario: { type: 'string', default: 'cfs-sim/scenarios/demo.json' },
        'sim-port': { type: 'string' },
        'check-interval': { type: 'string' },
        'batch-window': { type: 'string' },
        limits: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) throw new UsageError(USAGE);
  if (values.scenario === '') throw new UsageError('--scenario needs a file');
  return {
    durationS: values.duration === undefined ? null : intArg('duration', values.duration, 1, 0),
    quiet: values.quiet,
    freePorts: values['free-ports'],
    scenario: values.scenario,
    simPort: intArg('sim-port', values['sim-port'], 0, 0),
    checkInterval: intArg('check-interval', values['check-interval'], 1, 2),
    batchWindow: intArg('batch-window', values['batch-window'], 0, 5),
    limits: values.limits,
  };
}
