/**
 * Bounded waiting: every wait in the suite polls a condition until a deadline (the one waitFor, scripts/src/wait.ts),
 * never a fixed sleep. holdsFor is the only timed window: a "must not happen" check, kept as short as its property.
 */
import { waitFor, type WaitOptions } from '../../scripts/src/wait';

export { WaitTimeout, waitFor, type WaitOptions } from '../../scripts/src/wait';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
export async function holdsFor(
  probe: () => boolean | Promise<boolean>,
  durationMs: number,
  intervalMs = 250,
): Promise<boolean> {
  const end = Date.now() + durationMs;
  while (Date.now() < end) {
    if (!(await probe())) return false;
    await pause(Math.min(intervalMs, Math.max(1, end - Date.now())));
  }
  return Boolean(await probe());
}

/** One line of the e2e report, printed so a CI log shows the measured figure next to its bound. */
export function report(line: string): void {
  console.log(`[e2e] ${line}`);
}
