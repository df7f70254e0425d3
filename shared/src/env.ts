/**
 * Typed reads of environment settings. A bad value is an error that names the variable and what was wrong,
 * raised at start-up so a misconfigured container fails fast and says why.
 */
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
  if (value < min || value > max) throw new ConfigError(`${name}=${value} is outside ${min}..${max}`);
  return value;
}

export function envNumber(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw.trim());
  if (!Number.isFinite(value)) throw new ConfigError(`${name}=${JSON.stringify(raw)} is not a number`);
  if (value < min) throw new ConfigError(`${name}=${value} is below ${min}`);
  return value;
}

export function envBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name}=${JSON.stringify(raw)} is not a boolean (true/false)`);
}
