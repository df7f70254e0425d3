/**
 * A program's command line, declared once: its options (with node:util parseArgs' own option config plus a value
 * name and a line of help), its positionals and its exit codes. The parsing (`parseCli`) and the `--help` text
 * (`cliUsage`) both come from that declaration, so the usage lists every option and exit code the program has.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CliOption {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's name in the usage, e.g. SECONDS (string options). */
  value?: string;
  help: string;
}

export interface CliSpec {
  /** How it is run, e.g. `node batcher/dist/explain.js`. */
  command: string;
  /** One line: what it does. */
  summary: string;
  /** The positionals in the usage line, e.g. `ID` or `[serve | check [live|startup]]`. */
  positionals?: string;
  options: Record<string, CliOption>;
  exitCodes: ReadonlyArray<readonly [number, string]>;
  /** Lines after the options (environment, examples). */
  notes?: readonly string[];
}

/** Every program takes it; it prints the usage on stdout and exits 0. */
const HELP: CliOption = { type: 'boolean', short: 'h', help: 'print this help and exit 0' };

const allOptions = (spec: CliSpec): Record<string, CliOption> => ({ ...spec.options, help: HELP });

function flag(name: string, o: CliOption): string {
  const value = o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : '';
  return `${o.short ? `-${o.short}, ` : ''}--${name}${value}`;
}

/** The --help text: usage line, summary, every option, every exit code, then the notes. */
export function cliUsage(spec: CliSpec): string {
  const options = Object.entries(allOptions(spec));
  const flags = options.map(([name, o]) => flag(name, o));
  const width = Math.max(...flags.map((f) => f.length));
  return [
    `usage: ${spec.command}${spec.positionals ? ` ${spec.positionals}` : ''}${options.length > 1 ? ' [options]' : ''}`,
    spec.summary,
    '',
    'Options:',
    ...options.map(([, o], i) => `  ${flags[i]!.padEnd(width)}  ${o.help}`),
    '',
    'Exit codes:',
    ...spec.exitCodes.map(([code, meaning]) => `  ${code}  ${meaning}`),
    ...(spec.notes?.length ? ['', ...spec.notes] : []),
    '',
  ].join('\n');
}

export interface ParsedCli {
  help: boolean;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** node:util parseArgs on the declaration (strict); a bad option throws parseArgs' own TypeError. */
export function parseCli(spec: CliSpec, argv: readonly string[]): ParsedCli {
  const options: ParseArgsConfig['options'] = {};
  for (const [name, o] of Object.entries(allOptions(spec))) {
    options[name] = o.short ? { type: o.type, short: o.short } : { type: o.type };
  }
  const { values, positionals } = parseArgs({
    args: [...argv],
    options,
    strict: true,
    allowPositionals: spec.positionals !== undefined,
  });
  return { help: values.help === true, values: values as ParsedCli['values'], positionals };
}

/** parseArgs' message without its advice about `--` (our programs take no option-like positionals). */
export function cliErrorMessage(err: unknown): string {
  return (err as Error).message.replace(/\. To specify a positional .*$/s, '');
}
