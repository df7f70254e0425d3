/**
 * Pure: the /status document, built from the cached evaluation, for people: every instant an RFC 3339 UTC string
 * (`..._at`, `since`, `until`), every duration a whole number in the unit its name ends in (`_seconds`, `_ms`). The
 * raw figures (epoch milliseconds) stay in the heartbeat file, which is what the sidecar itself reads.
 */
import type { Heartbeat, HeartbeatReadResult } from '@cfs-batcher/shared';
import type { Thresholds } from './config';
import { heartbeatExt } from './heartbeat-ext';
import { cycleRatePerMinute, type CfsCache, type History, type Now } from './history';
import type { StartupVerdict } from './startup-gate';
import { progressDeadlineMs, type Verdict } from './verdict';

export interface Evaluation {
  now: Now;
  read: HeartbeatReadResult;
  history: History;
  cfs: CfsCache;
  verdict: Verdict;
  startup: StartupVerdict;
}

const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();
const sec = (ms: number | null): number | null => (ms === null ? null : Math.round(ms / 1000));

/** The heartbeat's `cfs`, its instants as RFC 3339. */
function batcherCfs(c: Heartbeat['cfs']): Record<string, unknown> {
  const e = c.last_error;
  const r = c.retrying;
  return {
    last_success_at: iso(c.last_success_ms),
    last_error: e ? { at: iso(e.at_ms), kind: e.kind, message: e.message } : null,
    retrying: r
      ? {
          method: r.method,
          route: r.route,
          answer: r.answer,
          attempts: r.attempts,
          since: iso(r.since_ms),
          until: iso(r.until_ms),
        }
      : null,
  };
}

export function buildStatus(
  e: Evaluation,
  t: Thresholds,
  extra: { heartbeatPath: string; cfsPollMs: number },
): Record<string, unknown> {
  const { verdict: v, history: h, cfs, now } = e;
  const hb = h.lastGood;
  const o = cfs.latest;
  const rate = cycleRatePerMinute(h);
  const ext = heartbeatExt(hb);
  return {
    live: v.live,
    reason: v.reason,
    message: v.message,
    evaluated_at: iso(now.wallMs),
    startup: { ready: e.startup.ready, message: e.startup.message },
    heartbeat: {
      path: extra.heartbeatPath,
      read: e.read.ok ? 'ok' : e.read.reason,
      read_problem: e.read.ok ? null : e.read.detail,
      read_failing_for_seconds: h.badRead ? sec(now.monoMs - h.badRead.sinceMono) : null,
      age_seconds: sec(v.details.heartbeatAgeMs),
      instance_id: hb?.instance_id ?? null,
      pid: hb?.pid ?? null,
      started_at: iso(hb?.started_at_ms),
      written_at: iso(hb?.written_at_ms),
      sequence: hb?.sequence ?? null,
      phase: hb?.phase ?? null,
      phase_is_wait: hb?.phase_is_wait ?? null,
      phase_age_seconds: sec(v.details.phaseAgeMs),
      phase_budget_seconds: sec(v.details.phaseBudgetMs),
      cycle: hb?.cycle ?? null,
      cycles_per_minute: rate === null ? null : Math.round(rate * 100) / 100,
      last_cycle: hb?.last_cycle
        ? {
            completed_at: iso(hb.last_cycle.completed_at_ms),
            duration_ms: Math.round(hb.last_cycle.duration_ms),
            outcome: hb.last_cycle.outcome,
            ...(hb.last_cycle.error !== undefined ? { error: hb.last_cycle.error } : {}),
          }
        : null,
      options: hb?.options ?? null,
      disabled: hb?.disabled ?? null,
      backoff: hb ? { active: hb.backoff.active, seconds: hb.backoff.seconds, until: iso(hb.backoff.until_ms) } : null,
      batcher_cfs: hb ? batcherCfs(hb.cfs) : null,
      counters: hb
        ? {
            pending_seen: hb.counters.pending_seen,
            batches_queued: hb.counters.batches_queued,
            batches_active: hb.counters.batches_active,
            sessions_created_total: hb.counters.sessions_created_total,
          }
        : null,
      last_batcher_session_created_at: iso(hb?.counters.last_session_created_ms),
      // the optional heartbeat fields (heartbeat-ext.ts); null when the batcher does not report them
      creating: ext.creating
        ? {
            state: ext.creating.state,
            reason: ext.creating.reason,
            next_attempt_at: iso(ext.creating.next_attempt_ms),
            last_attempt_at: iso(ext.creating.last_attempt_ms),
            cfs_trouble_since: iso(ext.creating.cfs_trouble_since_ms),
            last_attempt_seen_seconds_ago: sec(v.details.lastAttemptAgeMs),
          }
        : null,
      pacing: ext.pacing,
      last_cfs_answer_at: iso(ext.lastCfsAnswerMs),
      last_cfs_answer_seen_seconds_ago: sec(v.details.lastCfsAnswerAgeMs),
      completions_unwritten: ext.completionsUnwritten,
    },
    cfs: {
      polling: extra.cfsPollMs > 0,
      reachable: o ? o.ok : null,
      last_poll_at: iso(o?.atWall),
      last_poll_duration_ms: o ? Math.round(o.durationMs) : null,
      last_error: o && !o.ok ? (o.error ?? 'unknown error') : null,
      last_success_at: iso(cfs.lastSuccess?.atWall),
      pending_components: cfs.lastSuccess?.pendingComponents ?? null,
      active_batcher_session: cfs.lastSuccess?.activeSession ?? null,
    },
    progress: {
      // The stall clock (stall-clock.ts): stopped, running, or paused while CFS is in trouble.
      clock: h.stall.stallMs === null ? 'stopped' : h.stall.pausedBy ? 'paused' : 'running',
      stall_seconds: sec(h.stall.stallMs),
      excused_seconds: h.stall.stallMs === null ? null : sec(h.stall.excusedMs),
      deadline_seconds: sec(progressDeadlineMs(hb, t)),
      stopped_reason: h.stall.stoppedBy,
      paused_reason: h.stall.pausedBy,
      last_reset_reason: h.stall.lastReset?.reason ?? null,
      last_reset_seconds_ago: h.stall.lastReset ? sec(now.monoMs - h.stall.lastReset.atMono) : null,
      running_for_seconds: h.stall.runSinceMono === null ? null : sec(now.monoMs - h.stall.runSinceMono),
      resets: h.stall.resets,
      cfs_trouble: v.details.cfsTrouble,
    },
    restarts_seen: h.restarts,
    instances_seen: h.instancesSeen,
    sidecar_started_at: iso(h.sidecarStartWall),
    thresholds: {
      startup_grace_seconds: t.startupGraceMs / 1000,
      freshness_seconds: t.freshnessMs === null ? null : t.freshnessMs / 1000,
      trying_margin_seconds: t.tryingMarginMs / 1000,
      phase_answer_allowance_seconds: t.cfsAnswerAllowanceMs / 1000,
      freshness_limit_seconds: v.details.freshnessLimitMs / 1000,
      // the same limit: it applies in every phase now; the field stays for readers of this page that use it
      silence_limit_seconds: v.details.freshnessLimitMs / 1000,
      phase_budgets_seconds: Object.fromEntries(
        Object.entries(t.phaseBudgetsMs).map(([k, ms]) => [k, (ms ?? 0) / 1000]),
      ),
      default_phase_budget_seconds: t.defaultPhaseBudgetMs / 1000,
      progress_deadline_seconds: sec(progressDeadlineMs(hb, t)),
      progress_intervals: t.progressIntervals,
      cfs_poll_seconds: extra.cfsPollMs / 1000,
    },
  };
}
