/**
 * Writes the heartbeat from the main loop (never from a timer). A write that fails is logged (at most once a minute),
 * counted, and otherwise ignored: a full disk must not stop configuration work. The sidecar sees the stale file.
 */
import {
  WAIT_PHASES,
  errorMessage,
  getLogger,
  newInstanceId,
  writeHeartbeat,
  type Heartbeat,
  type Phase,
} from '@cfs-batcher/shared';

const log = getLogger('batcher.__main__');
const FAILURE_LOG_INTERVAL_MS = 60_000;
/** Progress stamps inside a phase are throttled to one per second: enough for the sidecar, cheap for the loop. */
const PROGRESS_MIN_INTERVAL_MS = 1000;
/**
 * A stamp waits at most this long for its write: a slow or stuck heartbeat volume must not hold the loop (the write
 * goes on in the background, the next ones queue behind it, and the sidecar sees a stale file if it never ends).
 */
export const WRITE_DEADLINE_MS = 2000;
/** A change of wall minus monotonic time larger than this is a wall-clock jump (NTP slews far slower). */
const JUMP_MS = 1000;

export type HeartbeatBody = Omit<
  Heartbeat,
  | 'format'
  | 'instance_id'
  | 'pid'
  | 'started_at_ms'
  | 'written_at_ms'
  | 'sequence'
  | 'phase'
  | 'phase_started_at_ms'
  | 'phase_is_wait'
>;

/**
 * Named, so that the two clocks cannot be swapped or one left out: the throttle and the phase ages run on `mono`, the
 * file reports `wall`; a writer given the wall clock for both would age a phase by a wall-clock jump.
 */
export interface HeartbeatWriterOptions {
  /** The heartbeat file; undefined writes nothing (the phase is still tracked). */
  readonly path: string | undefined;
  /** Wall-clock epoch milliseconds: what the file reports. */
  readonly wall: () => number;
  /** Monotonic milliseconds (clock.ts): the progress throttle and the phase start times. */
  readonly mono: () => number;
  /** The process start, on the `mono` timeline. */
  readonly startedAt: number;
  /** The body, given the writer's anchored wall offset (wall - monotonic), so its times are as stable as the writer's. */
  readonly body: (wallOffset: number) => HeartbeatBody;
  /** Called at each failed or late write (the failure counter). */
  readonly onFailure?: () => void;
}

export class HeartbeatWriter {
  readonly instanceId = newInstanceId();
  private sequence = 0;
  private phase: Phase = 'starting';
  /** Monotonic, like `startedAt`: reported as wall time at each write, so a wall-clock jump cannot age a phase. */
  private phaseStartedAt: number;
  private lastFailureLogAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  /** The write in flight: writes are serialized so two stamps never race on the temp file. */
  private inflight: Promise<void> = Promise.resolve();
  private writing = false;
  /** Wall minus monotonic time, as of the last wall-clock jump (or the start). */
  private anchor: number;
  /** A write ran past WRITE_DEADLINE_MS and has not ended yet. */
  private stuck = false;
  failures = 0;

  private readonly path: string | undefined;
  private readonly wall: () => number;
  private readonly mono: () => number;
  private readonly startedAt: number;
  private readonly body: (wallOffset: number) => HeartbeatBody;
  private readonly onFailure: () => void;

  constructor(options: HeartbeatWriterOptions) {
    this.path = options.path;
    this.wall = options.wall;
    this.mono = options.mono;
    this.startedAt = options.startedAt;
    this.body = options.body;
    this.onFailure = options.onFailure ?? (() => undefined);
    this.phaseStartedAt = this.startedAt;
    this.anchor = this.wall() - this.mono();
  }

  get currentPhase(): Phase {
    return this.phase;
  }

  get lastSequence(): number {
    return this.sequence;
  }

  /**
   * Marks progress inside the current phase (a CFS answer arrived, a page was processed): stamps the heartbeat at
   * most once a second. Driven by the loop's own work, so a blocked or stopped loop stops calling it.
   */
  progress(): void {
    if (this.path === undefined || this.writing) return;
    if (this.mono() - this.lastWriteAt < PROGRESS_MIN_INTERVAL_MS) return;
    void this.stamp();
  }

  /** Changes phase (if different) and writes. Never throws. */
  async stamp(phase: Phase = this.phase): Promise<void> {
    if (phase !== this.phase) {
      this.phase = phase;
      this.phaseStartedAt = this.mono();
    }
    if (this.path === undefined) return;
    this.lastWriteAt = this.mono();
    if (this.stuck) {
      // A write is still stuck past its deadline: do not queue behind it (each stamp would cost the whole deadline).
      this.late();
      return;
    }
    const next = this.inflight.then(() => this.write());
    this.inflight = next;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), WRITE_DEADLINE_MS);
      timer.unref();
    });
    const r = await Promise.race([next, deadline]);
    clearTimeout(timer);
    if (r === 'late') {
      this.stuck = true;
      void next.finally(() => (this.stuck = false));
      this.late();
    }
  }

  /** A write past its deadline: counted and logged like a failure, and the loop goes on. */
  private late(): void {
    this.failures += 1;
    this.onFailure();
    this.logFailure(this.wall(), `write still running after ${WRITE_DEADLINE_MS} ms`);
  }

  private logFailure(now: number, why: string): void {
    if (now - this.lastFailureLogAt >= FAILURE_LOG_INTERVAL_MS) {
      log.error(`Unable to write heartbeat to ${this.path}: ${why}`, { suppressed_since_last: this.suppressed });
      this.lastFailureLogAt = now;
      this.suppressed = 0;
    } else {
      this.suppressed += 1;
    }
  }

  private async write(): Promise<void> {
    if (this.path === undefined) return;
    const now = this.wall();
    // Wall minus monotonic; re-anchored only when the wall clock jumped, so the reported start times stay the same
    // from write to write (the sidecar keys a phase on phase_started_at_ms) yet keep their true age after a jump.
    const offset = now - this.mono();
    if (Math.abs(offset - this.anchor) > JUMP_MS) this.anchor = offset;
    const toWall = (t: number): number => Math.max(0, Math.floor(t + this.anchor));
    this.writing = true;
    this.sequence += 1;
    const hb: Heartbeat = {
      format: 1,
      instance_id: this.instanceId,
      pid: process.pid,
      started_at_ms: toWall(this.startedAt),
      written_at_ms: Math.max(0, Math.floor(now)),
      sequence: this.sequence,
      phase: this.phase,
      phase_started_at_ms: toWall(this.phaseStartedAt),
      phase_is_wait: WAIT_PHASES.has(this.phase),
      ...this.body(this.anchor),
    };
    try {
      await writeHeartbeat(this.path, hb);
    } catch (err) {
      this.writing = false;
      this.failures += 1;
      this.onFailure();
      this.logFailure(now, errorMessage(err));
      return;
    }
    this.writing = false;
  }
}
