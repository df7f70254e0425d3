/**
 * Value sharing for compact components (no I/O).
 *
 * At 50k pending components almost every field of a BatchComponent repeats: a handful of configurations, layer
 * clone URLs, commits, limits, tag sets. JSON.parse gives each record its own copy of every string, and the batcher
 * keeps one snapshot per busy component, so without sharing the snapshots alone cost ~1 KB each: peak RSS at 50k
 * pending is 128-137 MB with the pool and 180 MB without (the budget is 150 MB), and at 100k the heap without it
 * sits at its cap (a steady cycle's CPU 2.2-2.3 s instead of 0.9-1.0 s). A pool hands out one shared (frozen)
 * instance per distinct value.
 *
 * Two generations bound the pool: `rotate()` (once per collection) drops what was not asked for during the last
 * full generation, so configurations that come and go never pile up. A value handed out earlier stays valid after it
 * leaves the pool; it is only no longer shared with newer records.
 */

/** Most distinct values one generation remembers; beyond it values are still returned, just not shared. */
export const MAX_POOL_ENTRIES = 100_000;

class Generations<V> {
  private current = new Map<string, V>();
  private previous = new Map<string, V>();

  constructor(private readonly max: number) {}

  get(key: string, make: (key: string) => V): V {
    const hit = this.current.get(key);
    if (hit !== undefined) return hit;
    const value = this.previous.get(key) ?? make(key);
    if (this.current.size < this.max) this.current.set(key, value);
    return value;
  }

  rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }
}

const identity = (s: string): string => s;

export class InternPool {
  private readonly strings: Generations<string>;
  private readonly derived = new Map<string, Generations<unknown>>();

  constructor(private readonly max = MAX_POOL_ENTRIES) {
    this.strings = new Generations(max);
  }

  /** The shared copy of `s`. */
  str(s: string): string {
    return this.strings.get(s, identity);
  }

  /**
   * A shared value computed from `key` (a string that fully determines it) by `make`, once per generation.
   * `kind` keeps values of different shapes apart when their keys could coincide.
   */
  value<V>(kind: string, key: string, make: () => V): V {
    let pool = this.derived.get(kind);
    if (!pool) {
      pool = new Generations(this.max);
      this.derived.set(kind, pool);
    }
    return pool.get(key, make) as V;
  }

  /** Starts a new generation; values unused for a whole generation are forgotten. */
  rotate(): void {
    this.strings.rotate();
    for (const pool of this.derived.values()) pool.rotate();
  }

  get size(): number {
    let n = this.strings.size;
    for (const pool of this.derived.values()) n += pool.size;
    return n;
  }
}
