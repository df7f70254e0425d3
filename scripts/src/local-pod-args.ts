/** The local pod's command line: options, defaults and the usage text. */

export interface LocalPodArgs {
  durationS: number | null;
  quiet: boolean;
  freePorts: boolean;
  scenario: string;
  simPort: number;
  checkInterval: number;
  batchWindow: number;
}

export class UsageError extends Error {}

const USAGE = `usage: node scripts/dist/local-pod.js [--duration SECONDS] [--quiet] [--free-ports]
       [--scenario FILE] [--sim-port PORT] [--check-interval S] [--batch-window S]`;

function intArg(flag: string, raw: string | undefined, min: number): number {
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min) throw new UsageError(`${flag} needs an integer >= ${min}`);
  return Number(raw);
}

/** Pure: argv (without node and script) -> options. */
export function parseArgs(argv: readonly string[]): LocalPodArgs {
  const a: LocalPodArgs = {
    durationS: null,
    quiet: false,
    freePorts: false,
    scenario: 'cfs-sim/scenarios/demo.json',
    simPort: 0,
    checkInterval: 2,
    batchWindow: 5,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    switch (flag) {
      case '--duration':
        a.durationS = intArg(flag, argv[++i], 1);
        break;
      case '--quiet':
        a.quiet = true;
        break;
      case '--free-ports':
        a.freePorts = true;
        break;
      case '--scenario': {
        const v = argv[++i];
        if (!v) throw new UsageError('--scenario needs a file');
        a.scenario = v;
        break;
      }
      case '--sim-port':
        a.simPort = intArg(flag, argv[++i], 0);
        break;
      case '--check-interval':
        a.checkInterval = intArg(flag, argv[++i], 1);
        break;
      case '--batch-window':
        a.batchWindow = intArg(flag, argv[++i], 0);
        break;
      case '--help':
      case '-h':
        throw new UsageError(USAGE);
      default:
        throw new UsageError(`unknown option ${flag}\n${USAGE}`);
    }
  }
  return a;
}
