/**
 * Time for the batcher. `now()` is monotonic (performance.now) anchored at the wall time the process started, so
 * every timer (batch window, create retry, backoff, pending timeout, budgets) measures durations that a wall-clock
 * jump cannot change. `wall()` is the wall clock, used only for what is reported (heartbeat epoch fields, metrics).
 * A monotonic instant `t` is reported on the wall clock as `t + wallOffset(clock)` (the heartbeat writer holds that
 * offset fixed between jumps, heartbeat-writer.ts): its age as seen on the wall clock stays right after a jump.
 */
import { performance } from 'node:perf_hooks';

export interface Clock {
  /** Monotonic milliseconds (epoch-like: anchored at the wall time of the clock's creation). */
  now(): number;
  /** Wall-clock epoch milliseconds; absent in test clocks that never jump (then equal to now()). */
  wall?(): number;
}

export function monotonicClock(): Clock {
  const base = Date.now();
  const t0 = performance.now();
  return { now: () => base + (performance.now() - t0), wall: () => Date.now() };
}

/** How far the wall clock is from the monotonic timeline right now (0 until the wall clock jumps). */
export function wallOffset(clock: Clock): number {
  return clock.wall ? clock.wall() - clock.now() : 0;
}

export function wallNow(clock: Clock): number {
  return clock.wall ? clock.wall() : clock.now();
}
