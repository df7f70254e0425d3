/**
 * When the sidecar saw a batcher timestamp change, on its own monotonic clock: the stamps themselves are never
 * compared with the sidecar's wall clock.
 */
import type { Heartbeat } from '@cfs-batcher/shared';
import type { Now } from './history';

/**
 * The batcher reports its monotonic instants as wall time with the offset of the moment it writes, so one instant
 * moves by a millisecond (and by NTP's slew) from write to write. A move this small is the same instant.
 */
export const STAMP_NOISE_MS = 100;

/** Pure: a batcher timestamp as last seen, and when the sidecar saw it change (its own clock, never the file's). */
export function seenChange(
  prevValue: number | null,
  prevMono: number | null,
  value: number | null,
  nowMono: number,
): [number | null, number | null] {
  if (value === null) return [null, null];
  // Compared with the previous read, not with the first sight: the slew cannot add up to a move.
  const moved = prevValue === null || Math.abs(value - prevValue) > STAMP_NOISE_MS;
  return moved || prevMono === null ? [value, nowMono] : [value, prevMono];
}

/**
 * Pure: when a stamp first seen in a file is taken to have been "seen", back-dated by its age in the file itself
 * (written_at_ms minus the stamp: both from the batcher's clock, so no comparison of two clocks): an old attempt read
 * by a sidecar that just started is not a fresh one.
 */
export function firstSight(hb: Heartbeat, value: number | null, now: Now): number | null {
  return value === null ? null : now.monoMs - Math.max(0, hb.written_at_ms - value);
}
