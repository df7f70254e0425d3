/**
 * Settings: each program declares its environment settings once, in one zod schema built here (the name, its default,
 * what it does and why a site would change it). The typed values, the refusal of unknown or misspelled names
 * (settings-names.ts), the `--help` list and the docs/CONTRACTS.md table all come from that declaration.
 *
 * A bad value is a ConfigError naming the variable and what was wrong, raised at start-up so a misconfigured
 * container fails fast and says why.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CFS_LOG_LEVELS, parseCfsLogLevel, type CfsLogLevel } from './logger';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** One setting: the schema of its value (applied to the variable's text, or to `default` when unset or empty). */
export interface Setting<T = unknown> {
  schema: z.ZodType<T, string>;
  /** The text used when the variable is unset or empty; undefined: the value is undefined then. */
  default: string | undefined;
  /** What it does (--help and the docs table). */
  meaning: string;
  /** Why a site changes it: a setting without one is a constant. */
  reason: string;
  /** Older names also read; the declared name wins when both are set. */
  aliases?: readonly string[];
}

export type SettingsShape = Record<string, Setting>;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type SettingsValues<S extends SettingsShape> = { [K in keyof S]: ValueOf<S[K]> };

/** A program's settings: its declarations and the prefixes (any case) it owns. */
export interface SettingsSchema<S extends SettingsShape> {
  program: string;
  /** A variable starting with one of these that is none of the settings is refused. */
  prefixes: readonly string[];
  settings: S;
  /** Every name read: settings and their aliases. */
  known: readonly string[];
  /** Names that were settings once, with what took their place: refused with that line. */
  retired: Readonly<Record<string, string>>;
  /** The values from `env`; a bad one is a ConfigError (unknown names are checked by refuseUnknownSettings). */
  parse(env: NodeJS.ProcessEnv): SettingsValues<S>;
}

export function defineSettings<S extends SettingsShape>(def: {
  program: string;
  prefixes: readonly string[];
  settings: S;
  retired?: Record<string, string>;
}): SettingsSchema<S> {
  const names = Object.keys(def.settings);
  const shape: Record<string, z.ZodType> = {};
  for (const name of names) {
    const s = def.settings[name]!;
    shape[name] = z
      .string()
      .optional()
      .transform((raw) => (raw === undefined || raw.trim() === '' ? s.default : raw))
      .pipe(s.default === undefined ? s.schema.optional() : s.schema);
  }
  const object = z.object(shape);
  const parse = (env: NodeJS.ProcessEnv): SettingsValues<S> => {
    const input: Record<string, string | undefined> = {};
    for (const name of names) {
      const from = [name, ...(def.settings[name]!.aliases ?? [])].find((n) => (env[n] ?? '').trim() !== '');
      input[name] = from === undefined ? undefined : env[from];
    }
    const result = object.safeParse(input);
    if (result.success) return result.data as SettingsValues<S>;
    const issue = result.error.issues[0]!;
    const name = String(issue.path[0]);
    const from = [name, ...(def.settings[name]?.aliases ?? [])].find((n) => (env[n] ?? '').trim() !== '') ?? name;
    const raw = input[name] ?? '';
    const shown = /^-?\d+$/.test(raw.trim()) ? raw.trim() : JSON.stringify(raw);
    throw new ConfigError(`${from}=${shown}${issue.message.startsWith(':') ? '' : ' '}${issue.message}`);
  };
  const known = names.flatMap((n) => [n, ...(def.settings[n]!.aliases ?? [])]).sort();
  return Object.freeze({
    program: def.program,
    prefixes: def.prefixes,
    settings: def.settings,
    known,
    retired: def.retired ?? {},
    parse,
  });
}

/** An integer in min..max. */
export function intSetting(min: number, max: number): z.ZodType<number, string> {
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'is not an integer')
    .transform(Number)
    .pipe(z.number().min(min, `is outside ${min}..${max}`).max(max, `is outside ${min}..${max}`));
}

export function textSetting(): z.ZodType<string, string> {
  return z.string().trim();
}

/** An http or https URL. */
export function httpUrlSetting(): z.ZodType<string, string> {
  return z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      if (!URL.canParse(v)) ctx.addIssue({ code: 'custom', message: 'is not a URL' });
      else if (!/^https?:$/.test(new URL(v).protocol))
        ctx.addIssue({ code: 'custom', message: 'is not an http or https URL' });
    });
}

/** A file this process can read now: a missing or unreadable one stops the program at start with a line naming it. */
export function readableFileSetting(): z.ZodType<string, string> {
  return z
    .string()
    .trim()
    .superRefine((file, ctx) => {
      try {
        readFileSync(file);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        ctx.addIssue({ code: 'custom', message: `cannot be read (${code})` });
      }
    });
}

/**
 * DEBUG, INFO, WARNING or ERROR in any case, or an alias the logger knows (WARN, CRITICAL). Anything else is refused:
 * a level that silently became INFO would hide the lines the operator asked for.
 */
export function logLevelSetting(): z.ZodType<CfsLogLevel, string> {
  return z
    .string()
    .trim()
    .refine(
      // the parser maps a value it knows the same way whatever the fallback; an unknown one falls back
      (raw) => parseCfsLogLevel(raw, 'DEBUG') === parseCfsLogLevel(raw, 'ERROR'),
      `is not a log level (one of ${CFS_LOG_LEVELS.join(', ')})`,
    )
    .transform((raw) => parseCfsLogLevel(raw, 'INFO'));
}

/** A value a parser of its own reads; the parser's error message says what is wrong. */
export function parsedSetting<T>(parse: (text: string) => T): z.ZodType<T, string> {
  return z.string().transform((text, ctx) => {
    try {
      return parse(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });
}

/** The --help lines of a program's settings: name (aliases), default, meaning. */
export function settingsUsage(schema: SettingsSchema<SettingsShape>): string[] {
  const lines: string[] = [];
  for (const [name, s] of Object.entries(schema.settings)) {
    const also = s.aliases?.length ? ` (also ${s.aliases.join(', ')}; ${name} wins)` : '';
    lines.push(`  ${name}${also}  default: ${s.default === undefined ? 'unset' : s.default}`);
    lines.push(`      ${s.meaning}`);
  }
  return lines;
}
