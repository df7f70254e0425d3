/**
 * The batcher's command line: it takes no arguments (every setting is an environment variable, every CFS option
 * comes from CFS); `--help` prints the usage, anything else is refused (exit 2) rather than ignored.
 */
import { ConfigError, cliErrorMessage, cliUsage, parseCli, settingsUsage, type CliSpec } from '@cfs-batcher/shared';
import { BATCHER_SETTINGS } from './config';

export const BATCHER_CLI: CliSpec = {
  command: 'node batcher/dist/main.js',
  summary: [
    'cfs-batcher: creates CFS sessions for components whose desired configuration is not applied. Runs until',
    'SIGTERM or SIGINT; batch size, window and the other CFS options are read from CFS (/v3/options).',
  ].join('\n'),
  options: {},
  exitCodes: [
    [0, 'stopped by SIGTERM or SIGINT (or --help)'],
    [1, 'a crash (logged as Unexpected error occurred, with the stack) or METRICS_PORT in use'],
    [2, 'a bad setting or argument, or a CFS_API_URL proven wrong at start'],
  ],
};

/** Pure: argv (without node and script) -> whether to print the usage; a bad argument is a ConfigError. */
export function wantsBatcherHelp(argv: readonly string[]): boolean {
  try {
    return parseCli(BATCHER_CLI, argv).help;
  } catch (err) {
    throw new ConfigError(
      `${cliErrorMessage(err)} (usage: main.js | main.js --help; settings are environment variables)`,
    );
  }
}

/** The --help text: what runs, its exit codes and every setting with its default (from the settings schema). */
export function batcherUsage(): string {
  return cliUsage({
    ...BATCHER_CLI,
    notes: [
      'Settings (environment variables; docs/CONTRACTS.md says why a site changes each):',
      ...settingsUsage(BATCHER_SETTINGS),
      `Any other ${BATCHER_SETTINGS.prefixes.map((p) => `${p}*`).join(', ')} variable, and any variable a typo away from a`,
      'setting, is refused at start (exit 2) naming the closest setting.',
    ],
  });
}
