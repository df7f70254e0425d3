/**
 * The batcher's command line: it takes no arguments (every setting is an environment variable, every CFS option
 * comes from CFS); `--help` prints the usage, anything else is refused (exit 2) rather than ignored.
 */
import { parseArgs as parseArgv } from 'node:util';
import { ConfigError, settingsUsage } from '@cfs-batcher/shared';
import { BATCHER_SETTINGS } from './config';

const USAGE_LINE = 'main.js | main.js --help';

/** Pure: argv (without node and script) -> whether to print the usage; a bad argument is a ConfigError. */
export function wantsBatcherHelp(argv: readonly string[]): boolean {
  try {
    const { values } = parseArgv({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { help: { type: 'boolean', short: 'h', default: false } },
    });
    return values.help;
  } catch (err) {
    throw new ConfigError(`${(err as Error).message} (usage: ${USAGE_LINE}; settings are environment variables)`);
  }
}

/** The --help text: what runs, exit codes and every setting with its default (from the settings schema). */
export function batcherUsage(): string {
  return [
    'cfs-batcher: creates CFS sessions for components whose desired configuration is not applied.',
    '',
    `usage: ${USAGE_LINE}`,
    '  -h, --help  print this help and exit 0',
    '  Runs until SIGTERM or SIGINT. Batch size, window and the other CFS options are read from CFS (/v3/options).',
    '',
    'Exit codes: 0 stopped by a signal (or --help), 1 a crash or a port in use, 2 a bad setting or argument.',
    '',
    'Settings (environment variables; docs/CONTRACTS.md says why a site changes each):',
    ...settingsUsage(BATCHER_SETTINGS),
    `Any other ${BATCHER_SETTINGS.prefixes.map((p) => `${p}*`).join(', ')} variable, and any variable a typo away from a`,
    'setting, is refused at start (exit 2) naming the closest setting.',
    '',
  ].join('\n');
}
