/**
 * Unknown variables: a program refuses, at start, a variable that carries one of its prefixes but is none of its
 * settings, naming the closest setting. A typo such as `SIDECAR_FRESHNES_SECONDS` would otherwise run the program on
 * the default the operator meant to change, with nothing said.
 *
 * The known names are not a second list: `settingNames` runs a program's own settings reader on an empty
 * environment and records every name it reads, so a setting is known exactly when its declaration (with its default)
 * exists. Variables the platform injects (Kubernetes service links) are never refused.
 */
import { ConfigError } from './env';

type Env = NodeJS.ProcessEnv;

/** Which variables a program owns and which of them it reads. */
export interface SettingsScope {
  /** Named in the error line, e.g. `batcher`. */
  program: string;
  /** A variable starting with one of these (any case) must be a known setting. */
  prefixes: readonly string[];
  known: readonly string[];
}

/** The names `read` looks up in an environment, i.e. the settings it declares; `read` must read each one always. */
export function settingNames(...readers: Array<(env: Env) => unknown>): string[] {
  const names = new Set<string>();
  const note = (key: string | symbol): void => {
    if (typeof key === 'string') names.add(key);
  };
  const empty = new Proxy<Env>(
    {},
    {
      get: (_target, key) => void note(key),
      has: (_target, key) => (note(key), false),
    },
  );
  for (const read of readers) read(empty);
  return [...names].sort();
}

/**
 * Kubernetes service links (`enableServiceLinks`, on by default): a Service `cfs-batcher` in the namespace gives
 * every pod `CFS_BATCHER_SERVICE_HOST`, `CFS_BATCHER_SERVICE_PORT[_<port name>]`, `CFS_BATCHER_PORT=tcp://...` and
 * `CFS_BATCHER_PORT_<n>_TCP[_PROTO|_PORT|_ADDR]`. A CSM namespace holds several such services.
 */
export function isServiceLink(name: string, value: string | undefined): boolean {
  if (/_SERVICE_HOST$/.test(name) || /_SERVICE_PORT(_[A-Z0-9_]+)?$/.test(name)) return true;
  if (/_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name)) return true;
  return /_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value ?? '');
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours cost 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name nearest to `name` (case ignored; the first in order on a tie). */
export function closestSetting(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(name.toUpperCase(), k);
    if (!best || distance < best.distance) best = { name: k, distance };
  }
  return best?.name;
}

/** A few edits for a long name: what a typo does; farther than that the closest setting is only a pointer. */
function looksLikeTypo(name: string, setting: string): boolean {
  return editDistance(name.toUpperCase(), setting) <= Math.max(2, Math.floor(name.length / 5));
}

export interface UnknownSetting {
  name: string;
  closest: string | undefined;
}

/** Pure: the variables of `env` that carry one of the scope's prefixes and are none of its settings. */
export function unknownSettings(env: Env, scope: SettingsScope): UnknownSetting[] {
  const known = new Set(scope.known);
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !known.has(name))
    .filter((name) => scope.prefixes.some((p) => name.toUpperCase().startsWith(p)))
    .filter((name) => !isServiceLink(name, env[name]))
    .sort()
    .map((name) => ({ name, closest: closestSetting(name, scope.known) }));
}

/** Throws one ConfigError naming every unknown variable and its closest setting. */
export function refuseUnknownSettings(env: Env, scope: SettingsScope): void {
  const unknown = unknownSettings(env, scope);
  if (unknown.length === 0) return;
  const hint = (u: UnknownSetting): string =>
    u.closest === undefined
      ? ''
      : looksLikeTypo(u.name, u.closest)
        ? ` (did you mean ${u.closest}?)`
        : ` (the closest setting is ${u.closest}; --help lists them all)`;
  const each = unknown.map((u) => `${u.name} is not a ${scope.program} setting${hint(u)}`).join('; ');
  const owned = scope.prefixes.map((p) => `${p}*`).join(', ');
  throw new ConfigError(`${each}; the ${scope.program} refuses unknown ${owned} variables: fix the name or unset it`);
}
