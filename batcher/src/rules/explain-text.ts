/**
 * How an explain answer writes times, durations and layer lists (pure). A sentence carries the wall-clock time of
 * day in UTC (what an operator compares with `date -u` and the logs) and how far away it is; the details carry
 * ISO 8601 instants.
 */

/** An instant of the batcher's monotonic timeline as a wall-clock ISO string (`offset` = wall - monotonic). */
export function isoAt(t: number, offset: number): string {
  return new Date(Math.round(t + offset)).toISOString();
}

/** "14:02:10 UTC". */
export function clockAt(t: number, offset: number): string {
  return `${isoAt(t, offset).slice(11, 19)} UTC`;
}

/** "42 s", "3 min 5 s", "2 h 4 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 120) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 120) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** "14:02:10 UTC (in 42 s)", or "14:02:10 UTC (now)" once it is due. */
export function whenAt(t: number, now: number, offset: number): string {
  const left = t - now;
  return `${clockAt(t, offset)} (${left <= 0 ? 'now' : `in ${duration(left)}`})`;
}

/**
 * A configuration limit ("0,1,2,5") as an operator reads it: "layers 0-2,5"; "all layers" when empty; with the
 * configuration's layer names, "layers 0-2,5 (base, cos, slingshot, uan)".
 */
export function layersText(configLimit: string, names?: readonly string[]): string {
  const plain = layersIndexText(configLimit);
  const named = layerNamesOf(configLimit, names);
  return named.length > 0 ? `${plain} (${named.join(', ')})` : plain;
}

/** The names of the limit's layers, in order ([] without names, or for "all layers" or an unnamed layer). */
export function layerNamesOf(configLimit: string, names?: readonly string[]): string[] {
  if (!names || configLimit === '') return [];
  const idx = configLimit.split(',').map(Number);
  const out = idx.map((i) => names[i]);
  return out.every((n): n is string => typeof n === 'string' && n !== '') ? out : [];
}

/** One layer as "layer 2 (slingshot)", or "layer 2" without its name. */
export function layerText(index: number, names?: readonly string[]): string {
  return layersText(String(index), names);
}

function layersIndexText(configLimit: string): string {
  const idx = configLimit
    .split(',')
    .filter((x) => x !== '')
    .map(Number);
  if (idx.length === 0 || idx.some((n) => !Number.isInteger(n))) return configLimit === '' ? 'all layers' : configLimit;
  const parts: string[] = [];
  for (let i = 0; i < idx.length; i++) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1] === idx[j]! + 1) j++;
    parts.push(j > i ? `${idx[i]}-${idx[j]}` : String(idx[i]));
    i = j;
  }
  return `${idx.length === 1 ? 'layer' : 'layers'} ${parts.join(',')}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
