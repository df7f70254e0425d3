/** Bounded waiting: every wait in the e2e suite polls a condition until a deadline, never a fixed sleep. */

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Said in the error when the deadline passes. */
  what: string;
}

export class WaitTimeout extends Error {
  override name = 'WaitTimeout';
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns something other than undefined/false/null, and returns that value.
 * A probe that throws counts as "not yet"; its last error is quoted if the deadline passes.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, o: WaitOptions): Promise<Exclude<T, false | null | undefined>> {
  const deadline = Date.now() + o.timeoutMs;
  const interval = o.intervalMs ?? 100;
  let lastError: unknown;
  for (let i = 0; ; i++) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as Exclude<T, false | null | undefined>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : '';
      throw new WaitTimeout(`timed out after ${o.timeoutMs} ms waiting for ${o.what}${why}`);
    }
    await pause(Math.min(interval, Math.max(1, deadline - Date.now())));
  }
}

/** Measures how long it takes until `probe` holds; returns seconds (for the [e2e] report lines). */
export async function timeUntil(probe: () => unknown, o: WaitOptions): Promise<number> {
  const t0 = Date.now();
  await waitFor(async () => Boolean(await probe()), o);
  return (Date.now() - t0) / 1000;
}

/**
 * Checks that `probe` stays true for the whole of `durationMs` (sampled every interval). Returns the first
 * failing sample's description, or null. Used for "must NOT happen" assertions (no restart during an outage).
 */
export async function holdsFor(probe: () => boolean | Promise<boolean>, durationMs: number, intervalMs = 250): Promise<boolean> {
  const end = Date.now() + durationMs;
  while (Date.now() < end) {
    if (!(await probe())) return false;
    await pause(Math.min(intervalMs, Math.max(1, end - Date.now())));
  }
  return Boolean(await probe());
}

/** One line of the e2e report, printed so a CI log shows the measured figure next to its bound. */
export function report(line: string): void {
  // eslint-disable-next-line no-console
  console.log(`[e2e] ${line}`);
}
