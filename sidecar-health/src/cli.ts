/**
 * The sidecar's command line: `main.js [serve]` serves the probes, `main.js check [live|startup] [--standalone]`
 * prints one verdict (exec-style probe), `--help` prints the usage. Anything else is refused (exit 2): a probe
 * command with a typo must not pass as `check live`.
 */
import { ConfigError, cliErrorMessage, cliUsage, parseCli, settingsUsage, type CliSpec } from '@cfs-batcher/shared';
import type { CheckKind } from './check';
import { SIDECAR_SETTINGS } from './config';

export type SidecarCommand =
  { kind: 'help' } | { kind: 'serve' } | { kind: 'check'; check: CheckKind; standalone: boolean };

export const SIDECAR_USAGE_LINE = 'main.js [serve] | main.js check [live|startup] [--standalone] | main.js --help';

export const SIDECAR_CLI: CliSpec = {
  command: 'node sidecar-health/dist/main.js',
  positionals: '[serve | check [live|startup]]',
  summary: [
    'cfs-batcher health sidecar: judges the batcher from its heartbeat and serves its probes.',
    '  serve (default)  serve /livez, /startupz, /healthz, /readyz, /status and /metrics on HEALTH_PORT',
    '  check [live|startup]  print one verdict as JSON (live is the default), from the running sidecar',
  ].join('\n'),
  options: {
    standalone: { type: 'boolean', help: 'check: judge one heartbeat read here instead of asking the running sidecar' },
  },
  exitCodes: [
    [0, 'stopped by SIGTERM or SIGINT; check: healthy; --help'],
    [1, 'check: unhealthy; serve: HEALTH_PORT in use'],
    [2, 'a bad setting or argument'],
  ],
};

/** Pure: argv (without node and script) -> the command; a bad one is a ConfigError carrying the usage line. */
export function parseSidecarArgs(argv: readonly string[]): SidecarCommand {
  const refuse = (what: string): never => {
    throw new ConfigError(`${what} (usage: ${SIDECAR_USAGE_LINE})`);
  };
  let parsed;
  try {
    parsed = parseCli(SIDECAR_CLI, argv);
  } catch (err) {
    return refuse(cliErrorMessage(err));
  }
  const { positionals } = parsed;
  const values = { help: parsed.help, standalone: parsed.values.standalone === true };
  if (values.help) return { kind: 'help' };
  const [cmd = 'serve', ...rest] = positionals;
  if (cmd === 'serve') {
    if (rest.length > 0 || values.standalone)
      refuse(`serve takes no ${rest[0] ? `argument '${rest[0]}'` : '--standalone'}`);
    return { kind: 'serve' };
  }
  if (cmd !== 'check') return refuse(`unknown command '${cmd}'`);
  const [check = 'live', ...extra] = rest;
  if (check !== 'live' && check !== 'startup') return refuse(`unknown check '${check}'`);
  if (extra.length > 0) refuse(`unexpected argument '${extra[0]}' after check ${check}`);
  return { kind: 'check', check, standalone: values.standalone };
}

/** The --help text: commands, exit codes and every setting with its default (from the settings schema). */
export function sidecarUsage(): string {
  return cliUsage({
    ...SIDECAR_CLI,
    notes: [
      'Settings (environment variables; docs/CONTRACTS.md says why a site changes each):',
      ...settingsUsage(SIDECAR_SETTINGS),
      `Any other ${SIDECAR_SETTINGS.prefixes.map((p) => `${p}*`).join(', ')} variable, and any variable a typo away from a`,
      'setting, is refused at start (exit 2) naming the closest setting.',
    ],
  });
}
