/**
 * CLI: node cfs-sim/dist/main.js [--port PORT] [--host H] [--scenario FILE] [--generate N] [--validate] | --help
 * Logs JSON (getLogger('cfs-sim')); exits cleanly on SIGTERM/SIGINT. A bad argument, scenario or LOG_LEVEL exits 2
 * and a busy port 1, each with one line (runMain).
 */
import '@cfs-batcher/shared/node-check';
import {
  ConfigError,
  cliErrorMessage,
  cliUsage,
  parseCli,
  type CliSpec,
  defineSettings,
  logLevelSetting,
  exitAfterLogs,
  getLogger,
  runMain,
  setLogLevel,
  withListenSetting,
} from '@cfs-batcher/shared';
import { createSimulator } from './simulator';
import { TRANSPORTS, type Transport } from './transport';

const log = getLogger('cfs-sim');

/** The simulator's one setting; it owns no prefix (it runs in a developer's shell, among other tools' variables). */
const SIM_SETTINGS = defineSettings({
  program: 'simulator',
  prefixes: [],
  settings: {
    LOG_LEVEL: {
      schema: logLevelSetting(),
      default: 'INFO',
      meaning: 'log level',
      reason: 'DEBUG to see each request',
    },
  },
});

export const SIM_CLI: CliSpec = {
  command: 'node cfs-sim/dist/main.js',
  summary: 'CFS v3 simulator: serves the CFS API the batcher uses, with a simulated operator and faults.',
  options: {
    port: { type: 'string', value: 'PORT', help: 'listen port (default 8080; 0 = any free port)' },
    host: { type: 'string', value: 'H', help: 'listen address (default 127.0.0.1)' },
    scenario: {
      type: 'string',
      value: 'FILE',
      help: 'JSON scenario: inventory, options, operator timings, faults (cfs-sim/README.md)',
    },
    generate: {
      type: 'string',
      value: 'N',
      help: 'N generated components over 3 configurations instead of a scenario',
    },
    validate: {
      type: 'boolean',
      help: 'check every request and answer against the CFS OpenAPI spec (CFS_OPENAPI_SPEC)',
    },
    transport: {
      type: 'string',
      value: 'T',
      help: 'nodelay (default), or python (answers paced like the real server)',
    },
  },
  exitCodes: [
    [0, 'stopped by SIGTERM or SIGINT (or --help)'],
    [1, 'the port is in use'],
    [2, 'a bad argument, scenario or LOG_LEVEL'],
  ],
  notes: ['Environment: LOG_LEVEL (DEBUG, INFO, WARNING, ERROR; default INFO).'],
};

interface Args {
  help: boolean;
  port: number;
  host: string;
  scenario?: string;
  generate?: number;
  validate: boolean;
  transport?: Transport;
}

function int(name: string, v: string, min: number, max: number): number {
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new ConfigError(`${name}=${v} is not an integer in ${min}..${max}`);
  return Number(v);
}

export function parseArgs(argv: string[]): Args {
  let parsed;
  try {
    parsed = parseCli(SIM_CLI, argv);
  } catch (err) {
    throw new ConfigError(`${cliErrorMessage(err)} (--help lists the options)`);
  }
  const v = parsed.values as Record<string, string | undefined>;
  const t = v.transport;
  if (t !== undefined && !(TRANSPORTS as readonly string[]).includes(t))
    throw new ConfigError(`--transport must be one of ${TRANSPORTS.join(', ')}, got '${t}'`);
  return {
    help: parsed.help,
    port: v.port === undefined ? 8080 : int('--port', v.port, 0, 65535),
    host: v.host ?? '127.0.0.1',
    validate: parsed.values.validate === true,
    ...(v.scenario !== undefined ? { scenario: v.scenario } : {}),
    ...(v.generate !== undefined ? { generate: int('--generate', v.generate, 0, 200_000) } : {}),
    ...(t !== undefined ? { transport: t as Transport } : {}),
  };
}

async function main(): Promise<number | void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(cliUsage(SIM_CLI));
    return 0;
  }
  setLogLevel(SIM_SETTINGS.parse(process.env).LOG_LEVEL);
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
