/**
 * CLI: node cfs-sim/dist/main.js --port PORT [--host H] [--scenario FILE] [--generate N] [--validate] | --help
 * Logs JSON (getLogger('cfs-sim')); exits cleanly on SIGTERM/SIGINT. A bad argument, scenario or LOG_LEVEL exits 2
 * and a busy port 1, each with one line (runMain).
 */
import '@cfs-batcher/shared/node-check';
import {
  ConfigError,
  envLogLevel,
  exitAfterLogs,
  getLogger,
  runMain,
  setLogLevel,
  withListenSetting,
} from '@cfs-batcher/shared';
import { createSimulator } from './simulator';
import { TRANSPORTS, type Transport } from './transport';

const log = getLogger('cfs-sim');

const USAGE_LINE =
  'main.js --port PORT [--host H] [--scenario FILE] [--generate N] [--validate] [--transport nodelay|python] | --help';

const USAGE = [
  'CFS v3 simulator: serves the CFS API the batcher uses, with a simulated operator and faults.',
  '',
  `usage: ${USAGE_LINE}`,
  '  --port PORT      listen port (default 8080; 0 = any free port)',
  '  --host H         listen address (default 127.0.0.1)',
  '  --scenario FILE  JSON scenario: inventory, options, operator timings, faults (cfs-sim/README.md)',
  '  --generate N     N generated components over 3 configurations instead of a scenario',
  '  --validate       check every request and answer against the CFS OpenAPI spec (CFS_OPENAPI_SPEC)',
  '  --transport T    nodelay (default) or python (answers paced like the real server)',
  '',
  'Environment: LOG_LEVEL (DEBUG, INFO, WARNING, ERROR; default INFO).',
  'Exit codes: 0 stopped by a signal or --help, 1 a port in use, 2 a bad argument, scenario or LOG_LEVEL.',
  '',
].join('\n');

interface Args {
  help: boolean;
  port: number;
  host: string;
  scenario?: string;
  generate?: number;
  validate: boolean;
  transport?: Transport;
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { help: false, port: 8080, host: '127.0.0.1', validate: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new ConfigError(`${flag} needs a value`);
      return v;
    };
    const int = (name: string, v: string, min: number, max: number): number => {
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
        throw new ConfigError(`${name}=${v} is not an integer in ${min}..${max}`);
      return Number(v);
    };
    switch (flag) {
      case '--help':
      case '-h':
        args.help = true;
        break;
      case '--port':
        args.port = int('--port', value(), 0, 65535);
        break;
      case '--host':
        args.host = value();
        break;
      case '--scenario':
        args.scenario = value();
        break;
      case '--generate':
        args.generate = int('--generate', value(), 0, 200_000);
        break;
      case '--validate':
        args.validate = true;
        break;
      case '--transport': {
        const t = value(); // nodelay (default) | python: see transport.ts
        if (!(TRANSPORTS as readonly string[]).includes(t))
          throw new ConfigError(`--transport must be one of ${TRANSPORTS.join(', ')}, got '${t}'`);
        args.transport = t as Transport;
        break;
      }
      default:
        throw new ConfigError(`unknown argument '${flag}' (usage: ${USAGE_LINE})`);
    }
  }
  return args;
}

async function main(): Promise<number | void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  setLogLevel(envLogLevel(process.env, 'LOG_LEVEL', 'INFO'));
  let sim;
  try {
    sim = createSimulator({
      scenario: args.scenario,
      generate: args.generate !== undefined ? { components: args.generate, configurations: 3 } : undefined,
      validateWithSpec: args.validate,
      transport: args.transport,
    });
  } catch (err) {
    throw new ConfigError(`cannot start the simulator: ${(err as Error).message}`);
  }
  const { url } = await withListenSetting(sim.listen(args.port, args.host), '--port');
  log.info('ready', { url, components: sim.state.components.size, configurations: sim.state.configurations.size });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    sim
      .close()
      .then(() => exitAfterLogs(0))
      .catch((err) => {
        log.error('close failed', { error: String(err) });
        exitAfterLogs(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  runMain(main, (err) => {
    log.error('simulator failed', { error: (err as Error).message, stack: (err as Error).stack });
    exitAfterLogs(1);
  });
}
