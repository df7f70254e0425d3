/**
 * What the sidecar remembers between evaluations. The heartbeat file alone cannot say whether the batcher is making
 * progress (a copied or rewritten file looks fresh), so the sidecar records, on its own monotonic clock, when it saw
 * the sequence advance, when it first saw each instance and phase, and the stall clock of the progress rule
 * (stall-clock.ts).
 *
 * `observe` is pure: (previous history, new read, CFS cache, now) -> next history.
 */
import type { Heartbeat, HeartbeatReadResult } from '@cfs-batcher/shared';
import { heartbeatExt } from './heartbeat-ext';
import { firstSight, seenChange } from './stamp-seen';
import { initialStallClock, observeStall, type StallClock } from './stall-clock';

/** Wall clock (epoch ms, comparable with the batcher's timestamps) and the sidecar's monotonic clock. */
export interface Now {
  wallMs: number;
  monoMs: number;
}

/** One round of the sidecar's cheap CFS queries. */
export interface CfsObservation {
  atMono: number;
  atWall: number;
  ok: boolean;
  durationMs: number;
  /** "kind: message" of the first failing query. */
  error?: string;
  /** At least one enabled component is pending (a limit=1 query). */
  pendingComponents?: boolean;
  /** A running or pending batcher session, if any. */
  activeSession?: { name: string; status: string } | null;
}

export interface CfsCache {
  latest: CfsObservation | null;
  lastSuccess: CfsObservation | null;
}

export interface InstanceTrack {
  id: string;
  firstSeenMono: number;
  /** The instance already present at the sidecar's first read (not known to be new). */
  initial: boolean;
  maxSequence: number;
  advancedAtMono: number;
  /** Seen advancing since first sight: the instance is running, so its startup grace no longer applies. */
  proven: boolean;
  /** Newest written_at_ms seen for this instance, even on a rewrite that did not advance. */
  latestWrittenAtMs: number;
  /** When (sidecar monotonic clock) written_at_ms last moved: a rewrite without progress, told apart from silence. */
  rewrittenSeenMono: number;
  /** creating.last_attempt_ms as last seen, and when the sidecar saw it change (null: never tried, or unknown). */
  lastAttemptMs: number | null;
  attemptSeenMono: number | null;
  /** progress.last_cfs_answer_ms as last seen, and when the sidecar saw it change (null: no answer, or unknown). */
  lastCfsAnswerMs: number | null;
  answerSeenMono: number | null;
  /** cfs.last_error.at_ms as last seen, and when the sidecar saw it change (an older batcher's only trouble report). */
  lastCfsErrorMs: number | null;
  errorSeenMono: number | null;
  phaseKey: string;
  phaseSeenMono: number;
}

export interface History {
  sidecarStartMono: number;
  sidecarStartWall: number;
  reads: number;
  current: InstanceTrack | null;
  /** The newest valid heartbeat of the current instance. */
  lastGood: Heartbeat | null;
  /** The failing read in force, and since when it has failed. */
  badRead: { reason: string; detail: string; sinceMono: number } | null;
  restarts: number;
  instancesSeen: string[];
  cycleSamples: { mono: number; cycle: number }[];
  stall: StallClock;
}

const MAX_INSTANCES_KEPT = 10;
const CYCLE_WINDOW_MS = 5 * 60_000;
const MAX_CYCLE_SAMPLES = 120;

export function initialHistory(now: Now): History {
  return {
    sidecarStartMono: now.monoMs,
    sidecarStartWall: now.wallMs,
    reads: 0,
    current: null,
    lastGood: null,
    badRead: null,
    restarts: 0,
    instancesSeen: [],
    cycleSamples: [],
    stall: initialStallClock(),
  };
}

const phaseKeyOf = (hb: Heartbeat): string => `${hb.phase}@${hb.phase_started_at_ms}`;

/** Pure: folds one heartbeat read into the instance track. */
function observeHeartbeat(prev: History, read: HeartbeatReadResult, now: Now): History {
  const next: History = { ...prev, reads: prev.reads + 1 };
  if (!read.ok) {
    next.badRead =
      prev.badRead && prev.badRead.reason === read.reason
        ? { ...prev.badRead, detail: read.detail }
        : { reason: read.reason, detail: read.detail, sinceMono: now.monoMs };
    return next;
  }
  next.badRead = null;
  const hb = read.heartbeat;
  const cur = prev.current;
  if (!cur || cur.id !== hb.instance_id) {
    // A different instance id: the batcher restarted (unless this is the sidecar's first look).
    const first = prev.current === null && prev.instancesSeen.length === 0;
    const ext = heartbeatExt(hb);
    next.current = {
      id: hb.instance_id,
      firstSeenMono: now.monoMs,
      initial: first,
      maxSequence: hb.sequence,
      advancedAtMono: now.monoMs,
      proven: false,
      latestWrittenAtMs: hb.written_at_ms,
      rewrittenSeenMono: now.monoMs,
      lastAttemptMs: ext.creating?.last_attempt_ms ?? null,
      attemptSeenMono: firstSight(hb, ext.creating?.last_attempt_ms ?? null, now),
      lastCfsAnswerMs: ext.lastCfsAnswerMs,
      answerSeenMono: firstSight(hb, ext.lastCfsAnswerMs, now),
      lastCfsErrorMs: hb.cfs.last_error?.at_ms ?? null,
      errorSeenMono: firstSight(hb, hb.cfs.last_error?.at_ms ?? null, now),
      phaseKey: phaseKeyOf(hb),
      phaseSeenMono: now.monoMs,
    };
    if (!first) next.restarts = prev.restarts + 1;
    next.instancesSeen = [...prev.instancesSeen, hb.instance_id].slice(-MAX_INSTANCES_KEPT);
    next.cycleSamples = [{ mono: now.monoMs, cycle: hb.cycle }];
    next.lastGood = hb;
    return next;
  }
  const advanced = hb.sequence > cur.maxSequence;
  const key = phaseKeyOf(hb);
  // Only an advancing heartbeat may move the attempt and answer clocks: an old copy must not look like activity.
  const ext = heartbeatExt(advanced ? hb : prev.lastGood);
  const [lastAttemptMs, attemptSeenMono] = seenChange(
    cur.lastAttemptMs,
    cur.attemptSeenMono,
    ext.creating?.last_attempt_ms ?? null,
    now.monoMs,
  );
  const [lastCfsAnswerMs, answerSeenMono] = seenChange(
    cur.lastCfsAnswerMs,
    cur.answerSeenMono,
    ext.lastCfsAnswerMs,
    now.monoMs,
  );
  const [lastCfsErrorMs, errorSeenMono] = seenChange(
    cur.lastCfsErrorMs,
    cur.errorSeenMono,
    (advanced ? hb : (prev.lastGood ?? hb)).cfs.last_error?.at_ms ?? null,
    now.monoMs,
  );
  next.current = {
    ...cur,
    lastCfsErrorMs,
    errorSeenMono,
    rewrittenSeenMono: hb.written_at_ms > cur.latestWrittenAtMs ? now.monoMs : cur.rewrittenSeenMono,
    lastAttemptMs,
    attemptSeenMono,
    lastCfsAnswerMs,
    answerSeenMono,
    maxSequence: Math.max(cur.maxSequence, hb.sequence),
    advancedAtMono: advanced ? now.monoMs : cur.advancedAtMono,
    proven: cur.proven || advanced,
    latestWrittenAtMs: Math.max(cur.latestWrittenAtMs, hb.written_at_ms),
    phaseKey: advanced ? key : cur.phaseKey,
    phaseSeenMono: advanced && key !== cur.phaseKey ? now.monoMs : cur.phaseSeenMono,
  };
  // A lower or equal sequence is an old copy or a rewrite: it must not replace what we know.
  if (advanced || !prev.lastGood) next.lastGood = hb;
  if (advanced) {
    const samples = [...prev.cycleSamples, { mono: now.monoMs, cycle: hb.cycle }].filter(
      (s) => now.monoMs - s.mono <= CYCLE_WINDOW_MS,
    );
    next.cycleSamples = samples.slice(-MAX_CYCLE_SAMPLES);
  }
  return next;
}

/** Pure: is this observation recent and successful enough to judge progress with? */
export function usableCfs(cfs: CfsCache, now: Now, staleMs: number): CfsObservation | null {
  const o = cfs.latest;
  if (!o || !o.ok || now.monoMs - o.atMono > staleMs) return null;
  return o;
}

/** The thresholds `observe` needs (a Thresholds satisfies it). */
export interface ObserveLimits {
  cfsStaleMs: number;
  tryingMarginMs: number;
}

export function observe(prev: History, read: HeartbeatReadResult, cfs: CfsCache, now: Now, t: ObserveLimits): History {
  const next = observeHeartbeat(prev, read, now);
  next.stall = observeStall(prev.stall, {
    hb: next.lastGood,
    track: next.current,
    cfs: usableCfs(cfs, now, t.cfsStaleMs),
    now,
    tryingMarginMs: t.tryingMarginMs,
  });
  return next;
}

/** Cycles per minute over the last few minutes, or null before two samples exist. */
export function cycleRatePerMinute(h: History): number | null {
  const s = h.cycleSamples;
  if (s.length < 2) return null;
  const first = s[0]!;
  const last = s[s.length - 1]!;
  const dt = last.mono - first.mono;
  if (dt <= 0) return null;
  return ((last.cycle - first.cycle) * 60_000) / dt;
}

/** Holds the history across evaluations (the only mutable state of the verdict). */
export class Tracker {
  private h: History;
  constructor(now: Now) {
    this.h = initialHistory(now);
  }
  get history(): History {
    return this.h;
  }
  observe(read: HeartbeatReadResult, cfs: CfsCache, now: Now, t: ObserveLimits): History {
    this.h = observe(this.h, read, cfs, now, t);
    return this.h;
  }
}
