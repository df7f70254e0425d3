/** Shared fixtures for the sidecar tests: heartbeats, a fake clock and a scripted timeline. */
import type { Heartbeat, HeartbeatReadResult } from '@cfs-batcher/shared';
import {
  evaluate,
  evaluateStartup,
  initialHistory,
  observe,
  thresholdsFromEnv,
  type CfsCache,
  type CfsObservation,
  type History,
  type Now,
  type StartupVerdict,
  type Thresholds,
  type Verdict,
} from '@cfs-batcher/sidecar-health';

export const T0 = 1_800_000_000_000;

export function heartbeat(over: Partial<Heartbeat> = {}): Heartbeat {
  return {
    format: 1,
    instance_id: 'inst-a',
    pid: 42,
    started_at_ms: T0,
    written_at_ms: T0,
    sequence: 1,
    cycle: 0,
    phase: 'sleep',
    phase_started_at_ms: T0,
    phase_is_wait: false,
    last_cycle: null,
    options: { batcher_check_interval: 10, batch_window: 60, batch_size: 25, batcher_pending_timeout: 300 },
    disabled: false,
    backoff: { active: false, seconds: 0, until_ms: null },
    cfs: { last_success_ms: T0, last_error: null },
    counters: {
      pending_seen: 5,
      batches_queued: 0,
      batches_active: 0,
      sessions_created_total: 0,
      last_session_created_ms: null,
    },
    ...over,
  };
}

export const ok = (hb: Heartbeat): HeartbeatReadResult => ({
  ok: true,
  heartbeat: hb,
  mtimeMs: hb.written_at_ms,
  bytes: 500,
});
export const bad = (
  reason: 'missing' | 'unreadable' | 'oversized' | 'empty' | 'not_json' | 'invalid',
  detail = `test ${reason}`,
): HeartbeatReadResult => ({
  ok: false,
  reason,
  detail,
});

/**
 * Default thresholds (startup grace 60 s, the documented phase budgets) from the settings in `env`, with `over`
 * replacing what is not a setting.
 */
export const defaults = (env: NodeJS.ProcessEnv = {}, over: Partial<Thresholds> = {}): Thresholds => ({
  ...thresholdsFromEnv(env),
  ...over,
});
/** The freshness rule of a sidecar built without a fixed limit: the live check interval + the cycle budget. */

/**
 * A scripted timeline: each step advances the fake clock, then feeds one read (and optionally a CFS observation)
 * through observe + evaluate exactly as the sidecar loop does.
 */
export class Timeline {
  now: Now = { wallMs: T0, monoMs: 1_000_000 };
  history: History;
  cfs: CfsCache = { latest: null, lastSuccess: null };
  last!: { verdict: Verdict; startup: StartupVerdict };
  constructor(readonly t: Thresholds = defaults()) {
    this.history = initialHistory(this.now);
  }
  advance(ms: number): this {
    this.now = { wallMs: this.now.wallMs + ms, monoMs: this.now.monoMs + ms };
    return this;
  }
  cfsSays(o: Partial<CfsObservation>): this {
    const obs: CfsObservation = { atMono: this.now.monoMs, atWall: this.now.wallMs, ok: true, durationMs: 5, ...o };
    this.cfs = { latest: obs, lastSuccess: obs.ok ? obs : this.cfs.lastSuccess };
    return this;
  }
  read(r: HeartbeatReadResult): Verdict {
    this.history = observe(this.history, r, this.cfs, this.now, this.t);
    const verdict = evaluate({
      now: this.now,
      heartbeatRead: r,
      history: this.history,
      cfs: this.cfs,
      thresholds: this.t,
    });
    this.last = { verdict, startup: evaluateStartup(verdict, this.history, this.now, this.t) };
    return verdict;
  }
  /** A heartbeat written "now" by the batcher. */
  write(over: Partial<Heartbeat>): Verdict {
    return this.read(ok(heartbeat({ written_at_ms: this.now.wallMs, ...over })));
  }
}

/** Runs a batcher that writes every `step` ms, advancing the sequence, until `untilMs`. */
export function healthyFor(
  tl: Timeline,
  untilMs: number,
  step = 5000,
  over: Parameters<Timeline['write']>[0] = {},
): number {
  let seq = (tl.history.current?.maxSequence ?? 0) + 1;
  for (let elapsed = 0; elapsed < untilMs && elapsed < 3_600_000; elapsed += step) {
    tl.advance(step);
    const v = tl.write({ sequence: seq++, ...over });
    expect(v.live).toBe(true);
  }
  return seq;
}
