/** The local pod's command line: options, defaults and the usage text, from one declaration (LOCAL_POD_CLI). */
import { cliErrorMessage, cliUsage, parseCli, type CliSpec } from '@cfs-batcher/shared/cli';

export interface LocalPodArgs {
  /** --help: print LOCAL_POD_USAGE and exit 0. */
  help: boolean;
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

export const LOCAL_POD_CLI: CliSpec = {
  command: 'node scripts/dist/local-pod.js',
  summary: [
    'The local pod (npm start): the CFS simulator, the batcher and its health sidecar as child processes, probed as',
    'the rendered manifest says (kubelet-like restarts), with a status line. Ctrl-C or SIGTERM stops everything.',
  ].join('\n'),
  options: {
    duration: { type: 'string', value: 'SECONDS', help: 'stop after this long (default: run until Ctrl-C)' },
    quiet: { type: 'boolean', help: 'no status line, only events (the status line is rewritten in place on a tty)' },
    'free-ports': {
      type: 'boolean',
      help: "free ports for the sidecar and the batcher's metrics instead of the manifest's (several pods at once)",
    },
    scenario: { type: 'string', value: 'FILE', help: 'simulator scenario (default cfs-sim/scenarios/demo.json)' },
    'sim-port': { type: 'string', value: 'PORT', help: "the simulator's port (default: a free one)" },
    'check-interval': { type: 'string', value: 'S', help: 'batcher_check_interval of the simulated CFS (default 2)' },
    'batch-window': { type: 'string', value: 'S', help: 'batch_window of the simulated CFS (default 5)' },
    limits: {
      type: 'boolean',
      help: "run each container inside its manifest's CPU and memory limits (root: writes cgroups); prints peak RSS",
    },
  },
  exitCodes: [
    [0, 'stopped by Ctrl-C, SIGTERM or --duration (or --help)'],
    [1, 'the pod failed to start or run'],
    [2, 'a bad argument, a missing build or scenario, or a busy port (use --free-ports)'],
  ],
};
export const LOCAL_POD_USAGE = cliUsage(LOCAL_POD_CLI);
const USAGE_LINE = LOCAL_POD_USAGE.split('\n')[0]!;

function intArg(flag: string, raw: string | undefined, min: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new UsageError(`--${flag} needs an integer >= ${min}`);
  return Number(raw);
}

/** Pure: argv (without node and script) -> options. */
export function parseArgs(argv: readonly string[]): LocalPodArgs {
  let parsed;
  try {
    parsed = parseCli(LOCAL_POD_CLI, argv);
  } catch (err) {
    throw new UsageError(`${cliErrorMessage(err)}\n${USAGE_LINE} (--help lists the options)`);
  }
  const values = parsed.values as Record<string, string | undefined>;
  const scenario = values.scenario ?? 'cfs-sim/scenarios/demo.json';
  if (scenario === '') throw new UsageError('--scenario needs a file');
  return {
    help: parsed.help,
    durationS: values.duration === undefined ? null : intArg('duration', values.duration, 1, 0),
    quiet: parsed.values.quiet === true,
    freePorts: parsed.values['free-ports'] === true,
    scenario,
    simPort: intArg('sim-port', values['sim-port'], 0, 0),
    checkInterval: intArg('check-interval', values['check-interval'], 1, 2),
    batchWindow: intArg('batch-window', values['batch-window'], 0, 5),
    limits: parsed.values.limits === true,
  };
}
