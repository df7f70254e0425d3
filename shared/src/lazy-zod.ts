/**
 * zod, loaded on first use. A healthy batcher never needs it: the hot paths accept well-formed answers with
 * hand-written checks (shared/src/cfs/fast-checks.ts) that refuse anything zod would not return unchanged, and only
 * an unusual answer goes to zod, which judges it and says what is wrong. Loading zod costs ~8 MB of RSS per process
 * (docs/benchmarks.md), about a sixth of the original batcher's whole footprint at 10k components.
 */
import type * as Zod from 'zod';

export type ZodModule = typeof Zod;

let zod: ZodModule | undefined;

export function loadZod(): ZodModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load is the point of this module
  return (zod ??= require('zod') as ZodModule);
}

/** A value built once, on its first use. */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/** The type a schema accepts, for schemas built by a function of the module. */
export type Infer<T extends Zod.ZodType> = Zod.infer<T>;
