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

export type HeartbeatBody = Omit<
  Heartbeat,
  'format' | 'instance_id' | 'pid' | 'started_at_ms' | 'written_at_ms' | 'sequence' | 'phase' | 'phase_started_at_ms' | 'phase_is_wait'
>;

export class HeartbeatWriter {
  readonly instanceId = newInstanceId();
  private sequence = 0;
  private phase: Phase = 'starting';
  private phaseStartedAt: number;
  private lastFailureLogAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;
  failures = 0;

  constructor(
    private readonly path: string | undefined,
    private readonly now: () => number,
    private readonly startedAt: number,
    private readonly body: () => HeartbeatBody,
    private readonly onFailure: () => void = () => undefined,
  ) {
    this.phaseStartedAt = startedAt;
  }

  get currentPhase(): Phase {
    return this.phase;
  }

  get lastSequence(): number {
    return this.sequence;
  }

  /** Changes phase (if different) and writes. Never throws. */
  async stamp(phase: Phase = this.phase): Promise<void> {
    const now = this.now();
    if (phase !== this.phase) {
      this.phase = phase;
      this.phaseStartedAt = now;
    }
    if (this.path === undefined) return;
    this.sequence += 1;
    const hb: Heartbeat = {
      format: 1,
      instance_id: this.instanceId,
      pid: process.pid,
      started_at_ms: Math.max(0, Math.floor(this.startedAt)),
      written_at_ms: Math.max(0, Math.floor(now)),
      sequence: this.sequence,
      phase: this.phase,
      phase_started_at_ms: Math.max(0, Math.floor(this.phaseStartedAt)),
      phase_is_wait: WAIT_PHASES.has(this.phase),
      ...this.body(),
    };
    try {
      await writeHeartbeat(this.path, hb);
    } catch (err) {
      this.failures += 1;
      this.onFailure();
      if (now - this.lastFailureLogAt >= FAILURE_LOG_INTERVAL_MS) {
        log.error(`Unable to write heartbeat to ${this.path}: ${errorMessage(err)}`, {
          suppressed_since_last: this.suppressed,
        });
        this.lastFailureLogAt = now;
        this.suppressed = 0;
      } else {
        this.suppressed += 1;
      }
    }
  }
}
