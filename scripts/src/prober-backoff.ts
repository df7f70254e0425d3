/**
 * The kubelet's CrashLoopBackOff as the prober applies it: restarts wait 0 s, 10 s, 20 s ... 300 s, and a container
 * that ran long enough without trouble starts the sequence over.
 */

export const BACKOFF_INITIAL_MS = 10_000;
export const BACKOFF_MAX_MS = 300_000;
/** A container that ran this long without trouble starts its backoff over. */
export const BACKOFF_RESET_AFTER_MS = 600_000;

/** CrashLoopBackOff delay before the restart that follows `step` earlier consecutive restarts. */
export function backoffDelayMs(step: number): number {
  if (step <= 0) return 0;
  return Math.min(BACKOFF_INITIAL_MS * 2 ** (step - 1), BACKOFF_MAX_MS);
}

/** The wait before the next start, and the step count after it, for a container that exited after `ranMs`. */
export function planRestart(backoffStep: number, ranMs: number): { delayMs: number; backoffStep: number } {
  const stepNow = ranMs >= BACKOFF_RESET_AFTER_MS ? 0 : backoffStep;
  return { delayMs: backoffDelayMs(stepNow), backoffStep: stepNow + 1 };
}
