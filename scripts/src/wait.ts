/** Bounded waiting for the local pod, the benchmarks and the test suite: poll a condition until a deadline. */

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Said in the error when the deadline passes. */
  what: string;
  /** Checked at every poll: a reason to stop waiting at once (the process being waited on has exited). */
  abort?: () => string | null | undefined;
}

export class WaitTimeout extends Error {
  override name = 'WaitTimeout';
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns something other than undefined/false/null, and returns that value.
 * A probe that throws counts as "not yet"; its last error is quoted if the deadline passes.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  o: WaitOptions,
): Promise<Exclude<T, false | null | undefined>> {
  const deadline = Date.now() + o.timeoutMs;
  const interval = o.intervalMs ?? 100;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as Exclude<T, false | null | undefined>;
    } catch (err) {
      lastError = err;
    }
    const aborted = o.abort?.();
    if (aborted) throw new Error(`gave up waiting for ${o.what}: ${aborted}`);
    if (Date.now() >= deadline) {
      const why = lastError
        ? ` (last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)})`
        : '';
      throw new WaitTimeout(`timed out after ${o.timeoutMs} ms waiting for ${o.what}${why}`);
    }
    await pause(Math.min(interval, Math.max(1, deadline - Date.now())));
  }
}
