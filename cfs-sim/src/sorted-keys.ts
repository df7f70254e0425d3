/**
 * A sorted array of keys kept in plain-string (codepoint) order, as the real server sorts Redis keys with
 * Python sorted(). Inserts and deletes use binary search so a list request never re-sorts.
 */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Index of the first key strictly greater than `key` (so an after_id that does not exist still works). */
export function upperBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SortedKeys {
  private keys: string[] = [];

  get size(): number {
    return this.keys.length;
  }

  values(): readonly string[] {
    return this.keys;
  }

  has(key: string): boolean {
    const i = lowerBound(this.keys, key);
    return this.keys[i] === key;
  }

  insert(key: string): void {
    const i = lowerBound(this.keys, key);
    if (this.keys[i] === key) return;
    // Appending in order is the common case (generator, scenario): avoid the splice.
    if (i === this.keys.length) this.keys.push(key);
    else this.keys.splice(i, 0, key);
  }

  /** Bulk load: one sort instead of n splices. */
  load(keys: Iterable<string>): void {
    this.keys = Array.from(new Set([...this.keys, ...keys])).sort(compareKeys);
  }

  remove(key: string): void {
    const i = lowerBound(this.keys, key);
    if (this.keys[i] === key) this.keys.splice(i, 1);
  }

  clear(): void {
    this.keys = [];
  }
}

export interface Page<T> {
  items: T[];
  /** Key of the last item, when another matching item exists after the page. */
  nextAfter: string | null;
}

/**
 * One page of matching records: starts after `afterId` (exclusive), fills at `limit` matches, then peeks ahead
 * for one more match so the last page gets next=null even when it is exactly full.
 */
export function pageKeys<T>(
  keys: readonly string[],
  afterId: string,
  limit: number,
  select: (key: string) => T | undefined,
): Page<T> {
  const items: T[] = [];
  let i = afterId === '' ? 0 : upperBound(keys, afterId);
  let lastKey = '';
  for (; i < keys.length && items.length < limit; i++) {
    const key = keys[i] as string;
    const item = select(key);
    if (item !== undefined) {
      items.push(item);
      lastKey = key;
    }
  }
  if (items.length < limit) return { items, nextAfter: null };
  for (; i < keys.length; i++) {
    if (select(keys[i] as string) !== undefined) return { items, nextAfter: lastKey };
  }
  return { items, nextAfter: null };
}
