/** Kubernetes resource quantities, as a manifest writes them (`500m`, `250Mi`), read as numbers. */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
const DECIMAL: Record<string, number> = { m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9 };

/** Pure: Kubernetes quantity -> number (cores for cpu, bytes for memory); an error for a form it does not know. */
export function quantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|m|k|M|G)?$/.exec(q);
  if (!m) throw new Error(`unsupported quantity ${q}`);
  const unit = m[2] ?? '';
  return Number(m[1]) * (BINARY[unit] ?? DECIMAL[unit] ?? NaN);
}
