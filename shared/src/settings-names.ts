/**
 * Unknown and misspelled variables: a program refuses, at start, a variable that carries one of its prefixes but is
 * none of its settings, and any other variable a typo away from one of its settings (`LOG_LEVLE`, `METRICS_PROT`),
 * naming the closest setting. A typo would otherwise run the program on the default the operator meant to change,
 * with nothing said. The known names are the program's settings schema (settings.ts), so there is no second list.
 *
 * Variables the platform gives every pod are never refused: Kubernetes service links and `KUBERNETES_*`, the
 * container's own (`HOSTNAME`, `HOME`, `PATH`...), Node's and the OpenTelemetry SDK's, Istio's, and those a CSM
 * chart or a base image sets (`platformVariable`).
 */
import { ConfigError, type SettingsSchema, type SettingsShape } from './settings';

type Env = NodeJS.ProcessEnv;

/** Which variables a program owns and which of them it reads. */
export interface SettingsScope {
  /** Named in the error line, e.g. `batcher`. */
  program: string;
  /** A variable starting with one of these (any case) must be a known setting. */
  prefixes: readonly string[];
  known: readonly string[];
  /** Former settings and what replaced them. */
  retired?: Readonly<Record<string, string>>;
}

/** The scope of a settings schema, plus names a wrapper of the program reads itself. */
export function scopeOf(schema: SettingsSchema<SettingsShape>, alsoKnown: readonly string[] = []): SettingsScope {
  return {
    program: schema.program,
    prefixes: schema.prefixes,
    known: [...schema.known, ...alsoKnown],
    retired: schema.retired,
  };
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
  /** What replaced a former setting. */
  retired?: string;
}

/** Names every container may carry whatever its program: set by Kubernetes, the image, Node, the runtime. */
const PLATFORM_NAMES = new Set([
  'HOSTNAME',
  'HOME',
  'PATH',
  'PWD',
  'OLDPWD',
  'SHLVL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'TZ',
  'USER',
  'LOGNAME',
  'SHELL',
  '_',
  'MALLOC_ARENA_MAX',
  'POD_NAME',
  'POD_NAMESPACE',
  'POD_IP',
  'CONTAINER_NAME',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
]);
/** Prefixes of the same: Kubernetes, Istio (and Envoy), Node and npm, OpenTelemetry, locale. */
const PLATFORM_PREFIXES = ['KUBERNETES_', 'ISTIO_', 'ENVOY_', 'NODE_', 'NPM_', 'YARN_', 'OTEL_', 'LC_'];

/** True for a variable the platform puts in every pod (never refused, never taken for a typo). */
export function platformVariable(name: string, value: string | undefined): boolean {
  const upper = name.toUpperCase();
  return PLATFORM_NAMES.has(upper) || PLATFORM_PREFIXES.some((p) => upper.startsWith(p)) || isServiceLink(name, value);
}

/**
 * Pure: the variables of `env` the program refuses: a former setting, a name carrying one of its prefixes that is
 * none of its settings, or any other name a typo away from one of them; platform variables never.
 */
export function unknownSettings(env: Env, scope: SettingsScope): UnknownSetting[] {
  const known = new Set(scope.known);
  const retired = scope.retired ?? {};
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !known.has(name) && !platformVariable(name, env[name]))
    .filter((name) => {
      if (Object.hasOwn(retired, name.toUpperCase())) return true;
      if (scope.prefixes.some((p) => name.toUpperCase().startsWith(p))) return true;
      const closest = closestSetting(name, scope.known);
      return closest !== undefined && looksLikeTypo(name, closest);
    })
    .sort()
    .map((name) => {
      const was = retired[name.toUpperCase()];
      return { name, closest: closestSetting(name, scope.known), ...(was === undefined ? {} : { retired: was }) };
    });
}

/** Throws one ConfigError naming every refused variable and its closest setting (or what replaced it). */
export function refuseUnknownSettings(env: Env, scope: SettingsScope): void {
  const unknown = unknownSettings(env, scope);
  if (unknown.length === 0) return;
  const hint = (u: UnknownSetting): string =>
    u.retired !== undefined
      ? ` any more (${u.retired})`
      : u.closest === undefined
        ? ''
        : looksLikeTypo(u.name, u.closest)
          ? ` (did you mean ${u.closest}?)`
          : ` (the closest setting is ${u.closest}; --help lists them all)`;
  const each = unknown.map((u) => `${u.name} is not a ${scope.program} setting${hint(u)}`).join('; ');
  const owned = scope.prefixes.map((p) => `${p}*`).join(', ');
  throw new ConfigError(
    `${each}; the ${scope.program} refuses unknown ${owned} variables and misspelled settings: fix the name or unset it`,
  );
}
