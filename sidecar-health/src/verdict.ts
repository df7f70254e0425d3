/**
 * The verdict: a pure function of the clock, the latest heartbeat read, the sidecar's history and the CFS cache.
 * Every failing verdict carries a stable reason code and a sentence with the figures an admin needs.
 */
import { CFS_OPTION_DEFAULTS, WAIT_PHASES, type Heartbeat, type HeartbeatReadResult } from '@cfs-batcher/shared';
import type { Thresholds } from './config';
import { TROUBLE_STATES, heartbeatExt } from './heartbeat-ext';
import { usableCfs, type CfsCache, type History, type Now } from './history';
import { tryingLimitFor } from './stall-clock';

export const REASONS = [
  'ok',
  'starting',
  'heartbeat_missing',
  'heartbeat_invalid',
  'heartbeat_stale',
  'heartbeat_not_advancing',
  'phase_stuck',
  'no_progress',
] as const;
export type Reason = (typeof REASONS)[number];

export interface EvaluateInput {
  now: Now;
  heartbeatRead: HeartbeatReadResult;
  history: History;
  cfs: CfsCache;
  thresholds: Thresholds;
}

export interface VerdictDetails {
  heartbeatAgeMs: number | null;
  /** Longest silence allowed, in every phase (the batcher beats at least once a second in each). */
  freshnessLimitMs: number;
  phase: string | null;
  phaseAgeMs: number | null;
  phaseBudgetMs: number | null;
  inStartupGrace: boolean;
  startupGraceLeftMs: number;
  stallMs: number | null;
  progressDeadlineMs: number | null;
  /** Set when the current read failed but an earlier good heartbeat still counts. */
  readProblem: string | null;
  /** Since the sidecar saw creating.last_attempt_ms / progress.last_cfs_answer_ms change (null: unknown or never). */
  lastAttemptAgeMs: number | null;
  lastCfsAnswerAgeMs: number | null;
  /** Set while pending work without sessions is excused as CFS trouble (the batcher keeps trying). */
  cfsTrouble: string | null;
}

export interface Verdict {
  live: boolean;
  reason: Reason;
  message: string;
  details: VerdictDetails;
}

/** Whole seconds, with one decimal below 10 s so a short limit and its overrun do not print the same. */
export const secs = (ms: number): string =>
  Math.abs(ms) < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;

/** Pure: how long the batcher may go without trying CFS while it claims CFS trouble (2 x live interval + margin). */
export function tryingLimitMs(hb: Heartbeat, t: Thresholds): number {
  return tryingLimitFor(hb, t.tryingMarginMs);
}

const sinceSeen = (now: Now, mono: number | null): number | null =>
  mono === null ? null : Math.max(0, now.monoMs - mono);

/** Pure: the budget of a working phase; null for sleep (bounded by freshness) and dependency waits (exempt). */
export function phaseBudgetMs(hb: Heartbeat, t: Thresholds): number | null {
  if (hb.phase === 'sleep' || hb.phase_is_wait || WAIT_PHASES.has(hb.phase)) return null;
  return t.phaseBudgetsMs[hb.phase] ?? t.defaultPhaseBudgetMs;
}

export function progressDeadlineMs(hb: Heartbeat | null, t: Thresholds): number {
  if (t.progressDeadlineMs !== null) return t.progressDeadlineMs;
  const interval = hb?.options.batcher_check_interval ?? t.defaultCheckIntervalS;
  const window = hb?.options.batch_window ?? CFS_OPTION_DEFAULTS.batch_window;
  // Never shorter than three of the sidecar's own CFS rounds (cfsStaleMs): "no active session" is sampled once a round, and a
  // short-lived session between two samples must not read as a stall.
  return Math.max((window + t.progressIntervals * interval) * 1000, t.cfsStaleMs);
}

/** Pure: when the grace in force began: sidecar start, or the first sight of a new batcher instance. */
function graceStartMono(h: History): number {
  const cur = h.current;
  return cur && !cur.initial ? Math.max(h.sidecarStartMono, cur.firstSeenMono) : h.sidecarStartMono;
}

export function evaluate(input: EvaluateInput): Verdict {
  const { now, heartbeatRead: read, history: h, cfs, thresholds: t } = input;
  const hb = h.lastGood;
  const cur = h.current;
  // The batcher beats at least once a second in every phase, so silence longer than the freshness limit means a
  // stopped or blocked loop in any phase; the phase budget catches a loop that keeps beating but never leaves its phase.
  const silenceLimit = t.freshnessMs;
  const graceElapsed = now.monoMs - graceStartMono(h);
  // The grace covers an instance (or a sidecar) that has not yet been seen making progress; once the sequence has
  // advanced under the sidecar's eyes the normal limits apply, so a hang right after start-up is not hidden.
  const inGrace = graceElapsed < t.startupGraceMs && !(cur?.proven ?? false);
  const details: VerdictDetails = {
    heartbeatAgeMs: null,
    freshnessLimitMs: silenceLimit,
    phase: hb?.phase ?? null,
    phaseAgeMs: null,
    phaseBudgetMs: null,
    inStartupGrace: inGrace,
    startupGraceLeftMs: Math.max(0, t.startupGraceMs - graceElapsed),
    stallMs: null,
    progressDeadlineMs: null,
    readProblem: read.ok ? null : `${read.reason}: ${read.detail}`,
    lastAttemptAgeMs: sinceSeen(now, cur?.attemptSeenMono ?? null),
    lastCfsAnswerAgeMs: sinceSeen(now, cur?.answerSeenMono ?? null),
    cfsTrouble: null,
  };
  const fail = (reason: Reason, message: string): Verdict =>
    inGrace
      ? {
          live: true,
          reason: 'starting',
          message: `batcher starting (startup grace ${secs(t.startupGraceMs)}, ${secs(details.startupGraceLeftMs)} left): ${message}`,
          details,
        }
      : { live: false, reason, message, details };

  if (!hb || !cur) {
    const what = read.ok
      ? 'heartbeat not yet tracked'
      : read.reason === 'missing'
        ? read.detail
        : `heartbeat ${read.reason}: ${read.detail}`;
    const since = secs(now.monoMs - h.sidecarStartMono);
    return fail(
      read.ok || read.reason === 'missing' ? 'heartbeat_missing' : 'heartbeat_invalid',
      `no valid heartbeat for ${since} since the sidecar started (${what})`,
    );
  }

  // Only the sidecar's monotonic clock: when IT saw the sequence advance and the phase change. The file's wall-clock
  // stamps are never compared with the sidecar's wall clock, so a wall-clock jump (either way) cannot fail liveness.
  const silence = Math.max(0, now.monoMs - cur.advancedAtMono);
  const phaseAge = Math.max(0, now.monoMs - cur.phaseSeenMono);
  const budget = phaseBudgetMs(hb, t);
  const ext = heartbeatExt(hb);
  Object.assign(details, {
    heartbeatAgeMs: silence,
    phaseAgeMs: phaseAge,
    phaseBudgetMs: budget,
  });
  const phaseNote = `last phase ${hb.phase} began ${secs(phaseAge)} ago`;

  if (!read.ok && silence > silenceLimit) {
    const reason: Reason = read.reason === 'missing' ? 'heartbeat_missing' : 'heartbeat_invalid';
    return fail(
      reason,
      `no valid heartbeat for ${secs(silence)} (limit ${secs(silenceLimit)}): ${read.reason}: ${read.detail}; ${phaseNote}`,
    );
  }
  if (budget !== null && phaseAge > budget && !answering(ext.progressKnown, details.lastCfsAnswerAgeMs, t)) {
    const answer = ext.progressKnown
      ? `, last CFS answer ${details.lastCfsAnswerAgeMs === null ? 'never' : `${secs(details.lastCfsAnswerAgeMs)} ago`} (allowance ${secs(t.cfsAnswerAllowanceMs)})`
      : '';
    return fail(
      'phase_stuck',
      `phase ${hb.phase} began ${secs(phaseAge)} ago (budget ${secs(budget)})${answer}; last heartbeat ${secs(silence)} ago, sequence ${hb.sequence}`,
    );
  }
  if (silence > silenceLimit) {
    // Still being rewritten (written_at moves) while the sequence stands still: a loop that stamps without progress.
    if (now.monoMs - cur.rewrittenSeenMono <= silenceLimit) {
      return fail(
        'heartbeat_not_advancing',
        `heartbeat rewritten without progress: sequence ${cur.maxSequence} unchanged for ${secs(silence)} (limit ${secs(silenceLimit)}); ${phaseNote}`,
      );
    }
    return fail('heartbeat_stale', `no heartbeat for ${secs(silence)} (limit ${secs(silenceLimit)}); ${phaseNote}`);
  }

  const deadline = progressDeadlineMs(hb, t);
  details.progressDeadlineMs = deadline;
  // Judged only on a fresh CFS answer: while the sidecar cannot see CFS the clock is paused anyway (stall-clock.ts).
  if (h.stall.stallMs !== null && usableCfs(cfs, now, t.cfsStaleMs)) {
    const stall = h.stall.stallMs;
    details.stallMs = stall;
    const trouble = cfsTroubleExcuse(hb, details, t);
    if (stall > deadline && !trouble.excused) {
      const why =
        trouble.text ??
        `batcher phase ${hb.phase}, cycle ${hb.cycle}, ${hb.counters.sessions_created_total} sessions created by this instance`;
      const excused = h.stall.excusedMs > 0 ? ` (plus ${secs(h.stall.excusedMs)} excused as CFS trouble)` : '';
      const since = h.stall.lastReset ? `, clock last restarted by ${h.stall.lastReset.reason}` : '';
      return fail(
        'no_progress',
        `components pending in CFS for ${secs(stall)}${excused} with no batcher session created or active (deadline ${secs(deadline)}${since}); ${why}`,
      );
    }
    if (trouble.excused) details.cfsTrouble = trouble.text;
  }

  const readNote = read.ok
    ? ''
    : `; current read failed (${read.reason}), using the heartbeat from ${secs(silence)} ago`;
  const troubleNote = details.cfsTrouble ? `; pending work waits on CFS: ${details.cfsTrouble}` : '';
  return {
    live: true,
    reason: 'ok',
    message: `batcher alive: heartbeat ${secs(silence)} ago (limit ${secs(silenceLimit)}), phase ${hb.phase} for ${secs(phaseAge)}, cycle ${hb.cycle}${readNote}${troubleNote}`,
    details,
  };
}

/** Pure: a phase still getting CFS answers is not stuck. Unknown (an older heartbeat) falls back to the budget alone. */
function answering(progressKnown: boolean, answerAgeMs: number | null, t: Thresholds): boolean {
  return progressKnown && answerAgeMs !== null && answerAgeMs <= t.cfsAnswerAllowanceMs;
}

/**
 * Pure: pending work with no session is CFS's trouble, not a stalled loop, while the batcher reports a trouble state
 * AND the sidecar saw it try (create, lookup or completion PATCH) within 2 x the check interval + a margin.
 * `text` is null when the heartbeat claims no trouble (the plain no_progress rule applies).
 */
function cfsTroubleExcuse(hb: Heartbeat, d: VerdictDetails, t: Thresholds): { excused: boolean; text: string | null } {
  const c = heartbeatExt(hb).creating;
  if (!c || !TROUBLE_STATES.has(c.state)) return { excused: false, text: null };
  const limit = tryingLimitMs(hb, t);
  const age = d.lastAttemptAgeMs;
  const what = `creating ${c.state}${c.reason ? ` (${c.reason})` : ''}`;
  if (age !== null && age <= limit)
    return { excused: true, text: `${what}, last try ${secs(age)} ago (limit ${secs(limit)})` };
  const last = age === null ? 'never seen trying' : `last try seen ${secs(age)} ago`;
  return { excused: false, text: `batcher reports ${what} but has stopped trying: ${last} (limit ${secs(limit)})` };
}
