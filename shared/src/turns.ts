/**
 * Bounded synchronous stretches. One process serves its HTTP endpoints (the batcher's /explain and /metrics) on the
 * same event loop that runs its work, so a long synchronous pass (a page of thousands of records, a walk over every
 * batch) holds every answer until it ends: at 100k pending components, passes of 20-90 ms each under `--lite-mode`.
 * A `Turns` lets such a pass give the event loop a turn (timers, I/O, waiting requests) once it has run for
 * `sliceMs`: the caller asks `due()` between two items, at a point where its state is whole, and awaits `take()`
 * when it says so. The clock is read every `stride` items only: a read per record would cost more than it saves.
 *
 * A turn is also evidence of work: the pass's own code reached a point between two items, so `onTurn` (the
 * batcher's throttled progress stamp) is called after each. A blocked event loop takes no turn and a pass awaiting
 * something that never comes takes none either, so this cannot keep a hung loop's heartbeat fresh.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work between two turns of the event loop, at most (plus one stride of items). */
export const TURN_SLICE_MS = 8;
/** Items between two reads of the clock. */
const STRIDE = 32;

export class Turns {
  private startedAt = performance.now();
  private sinceCheck = 0;
  private readonly stride: number;

  /**
   * `sliceMs` 0 gives a turn every item (tests: every point where a turn may be given is then exercised).
   * `onTurn` runs after each turn, once the pass has resumed.
   */
  constructor(
    private readonly sliceMs = TURN_SLICE_MS,
    private readonly onTurn?: () => void,
  ) {
    this.stride = sliceMs > 0 ? STRIDE : 1;
  }

  /** Has this stretch run for its slice? Cheap: counts items, reads the clock every stride. */
  due(): boolean {
    if (++this.sinceCheck < this.stride) return false;
    this.sinceCheck = 0;
    return performance.now() - this.startedAt >= this.sliceMs;
  }

  /** One turn of the event loop (setImmediate: after pending I/O); the next slice starts when it returns. */
  async take(): Promise<void> {
    await nextTurn();
    this.onTurn?.();
    this.startedAt = performance.now();
    this.sinceCheck = 0;
  }
}
