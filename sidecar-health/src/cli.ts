/**
 * The sidecar's command line: `main.js [serve]` serves the probes, `main.js check [live|startup] [--standalone]`
 * prints one verdict (exec-style probe), `--help` prints the usage. Anything else is refused (exit 2): a probe
 * command with a typo must not pass as `check live`.
 */
import { parseArgs as parseArgv } from 'node:util';
import { ConfigError, settingsUsage } from '@cfs-batcher/shared';
import type { CheckKind } from './check';
import { SIDECAR_SETTINGS } from './config';

export type SidecarCommand =
  { kind: 'help' } | { kind: 'serve' } | { kind: 'check'; check: CheckKind; standalone: boolean };

export const SIDECAR_USAGE_LINE = 'main.js [serve] | main.js check [live|startup] [--standalone] | main.js --help';

/** Pure: argv (without node and script) -> the command; a bad one is a ConfigError carrying the usage line. */
export function parseSidecarArgs(argv: readonly string[]): SidecarCommand {
  const refuse = (what: string): never => {
    throw new ConfigError(`${what} (usage: ${SIDECAR_USAGE_LINE})`);
  };
  let parsed;
  try {
    parsed = parseArgv({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h', default: false },
        standalone: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    return refuse((err as Error).message.replace(/\. To specify a positional .*$/s, ''));
  }
  const { values, positionals } = parsed;
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
  return [
    'cfs-batcher health sidecar: judges the batcher from its heartbeat and serves its probes.',
    '',
    `usage: ${SIDECAR_USAGE_LINE}`,
    '  serve (default)  serve /livez, /startupz, /healthz, /readyz, /status and /metrics on HEALTH_PORT',
    '  check            print one verdict as JSON; exit 0 healthy, 1 unhealthy (live is the default)',
    '  --standalone     judge one heartbeat read here instead of asking the running sidecar',
    '  -h, --help       print this help and exit 0',
    '',
    'Exit codes: 0 stopped by a signal, healthy or --help; 1 unhealthy or a port in use; 2 a bad setting or argument.',
    '',
    'Settings (environment variables; docs/CONTRACTS.md says why a site changes each):',
    ...settingsUsage(SIDECAR_SETTINGS),
    `Any other ${SIDECAR_SETTINGS.prefixes.map((p) => `${p}*`).join(', ')} variable, and any variable a typo away from a`,
    'setting, is refused at start (exit 2) naming the closest setting.',
    '',
  ].join('\n');
}
