/**
 * Typed reads of environment settings. A bad value is an error that names the variable and what was wrong,
 * raised at start-up so a misconfigured container fails fast and says why.
 */
import { readFileSync } from 'node:fs';
import { CFS_LOG_LEVELS, parseCfsLogLevel, type CfsLogLevel } from './logger';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = NodeJS.ProcessEnv;

export function envString(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

export function envOptionalString(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

export function envInt(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name}=${JSON.stringify(raw)} is not an integer`);
  const value = Number(raw.trim());
  if (value < min && max === Number.MAX_SAFE_INTEGER) throw new ConfigError(`${name}=${value} is below ${min}`);
  if (value < min || value > max) throw new ConfigError(`${name}=${value} is outside ${min}..${max}`);
  return value;
}

/** The variable must hold an http or https URL. */
export function envHttpUrl(env: Env, name: string, fallback: string): string {
  const value = envString(env, name, fallback);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name}=${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name}=${JSON.stringify(value)} is not an http or https URL`);
  }
  return value;
}

/** The variable, when set, must name a file this process can read now. */
export function envReadableFile(env: Env, name: string): string | undefined {
  const file = envOptionalString(env, name);
  if (file === undefined) return undefined;
  try {
    readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`${name}=${file} cannot be read (${code})`);
  }
  return file;
}

/**
 * A log level setting: DEBUG, INFO, WARNING or ERROR in any case, or an alias the logger knows (WARN, CRITICAL).
 * Anything else is refused: a level that silently became INFO would hide the lines the operator asked for.
 */
export function envLogLevel(env: Env, name: string, fallback: CfsLogLevel): CfsLogLevel {
  const raw = envOptionalString(env, name)?.trim();
  if (raw === undefined || raw === '') return fallback;
  // the parser maps a value it knows the same way whatever the fallback; an unknown one falls back
  const level = parseCfsLogLevel(raw, 'DEBUG');
  if (level !== parseCfsLogLevel(raw, 'ERROR')) {
    throw new ConfigError(`${name}=${JSON.stringify(raw)} is not a log level (one of ${CFS_LOG_LEVELS.join(', ')})`);
  }
  return level;
}
