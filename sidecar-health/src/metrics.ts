/** Sidecar metrics (names fixed in docs/CONTRACTS.md), on their own registry. */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { CREATING_STATES, heartbeatExt } from './heartbeat-ext';
import type { CfsCache, History } from './history';
import { CLOCK_RESET_REASONS, type ClockResetReason } from './stall-clock';
import { REASONS, type Verdict } from './verdict';

export const PROBE_PATHS = ['/livez', '/startupz', '/healthz', '/readyz', '/status', '/metrics'] as const;

export class SidecarMetrics {
  readonly registry = new Registry();
  private readonly live: Gauge;
  private readonly verdict: Gauge<'reason'>;
  private readonly hbAge: Gauge;
  private readonly hbTimestamp: Gauge;
  private readonly hbSequence: Gauge;
  private readonly restarts: Counter;
  private readonly cfsReachable: Gauge;
  private readonly pending: Gauge;
  private readonly stall: Gauge;
  private readonly creating: Gauge<'state'>;
  private readonly pendingSessions: Gauge;
  private readonly pendingCap: Gauge;
  private readonly createsCap: Gauge;
  private readonly unwritten: Gauge;
  private readonly clockResets: Counter<'reason'>;
  readonly probes: Counter<'path' | 'code'>;
  private restartsCounted = 0;
  private readonly resetsCounted = new Map<ClockResetReason, number>();

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.live = new Gauge({ name: 'cfs_batcher_health_live', help: '1 when /livez answers 200', registers });
    this.verdict = new Gauge({
      name: 'cfs_batcher_health_verdict',
      help: '1 for the verdict reason in force, 0 for the others',
      labelNames: ['reason'],
      registers,
    });
    this.hbAge = new Gauge({
      name: 'cfs_batcher_health_heartbeat_age_seconds',
      help: 'Seconds since the batcher heartbeat last advanced (NaN before the first one)',
      registers,
    });
    this.hbTimestamp = new Gauge({
      name: 'cfs_batcher_health_last_heartbeat_timestamp_seconds',
      help: 'written_at of the newest valid heartbeat',
      registers,
    });
    this.hbSequence = new Gauge({
      name: 'cfs_batcher_health_heartbeat_sequence',
      help: 'Sequence of the newest valid heartbeat',
      registers,
    });
    this.restarts = new Counter({
      name: 'cfs_batcher_health_batcher_restarts_total',
      help: 'Batcher instance id changes seen by this sidecar',
      registers,
    });
    this.cfsReachable = new Gauge({
      name: 'cfs_batcher_health_cfs_reachable',
      help: '1 when the last CFS query round succeeded',
      registers,
    });
    this.pending = new Gauge({
      name: 'cfs_batcher_health_pending_components',
      help: '1 when at least one enabled component is pending (limit=1 query), 0 when none',
      registers,
    });
    this.stall = new Gauge({
      name: 'cfs_batcher_health_pending_stall_seconds',
      help: 'Stall clock of the progress rule: seconds schedulable work has waited with no batcher session created or active, CFS trouble excluded (0 while stopped)',
      registers,
    });
    this.clockResets = new Counter({
      name: 'cfs_batcher_health_progress_clock_resets_total',
      help: 'Times the running stall clock of the progress rule went back to zero, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.probes = new Counter({
      name: 'cfs_batcher_health_probe_requests_total',
      help: 'Requests to the sidecar endpoints',
      labelNames: ['path', 'code'],
      registers,
    });
    this.creating = new Gauge({
      name: 'cfs_batcher_health_creating_state',
      help: "1 for the batcher's creating.state in force (why it is or is not creating sessions), 0 for the others; all 0 when unreported",
      labelNames: ['state'],
      registers,
    });
    this.pendingSessions = new Gauge({
      name: 'cfs_batcher_health_pending_sessions',
      help: 'Batcher sessions still pending in CFS (pacing.pending_sessions; NaN when unreported)',
      registers,
    });
    this.pendingCap = new Gauge({
      name: 'cfs_batcher_health_pending_sessions_cap',
      help: 'Batcher sessions allowed pending in CFS now, the allowance (pacing.pending_cap)',
      registers,
    });
    this.createsCap = new Gauge({
      name: 'cfs_batcher_health_creates_per_minute_cap',
      help: 'Session creates per minute allowed (pacing.creates_per_minute_cap)',
      registers,
    });
    this.unwritten = new Gauge({
      name: 'cfs_batcher_health_completions_unwritten',
      help: 'Components whose completion PATCH failed and is queued for retry',
      registers,
    });
    for (const reason of REASONS) this.verdict.set({ reason }, 0);
    for (const state of CREATING_STATES) this.creating.set({ state }, 0);
    for (const reason of CLOCK_RESET_REASONS) this.clockResets.inc({ reason }, 0);
    for (const g of [
      this.hbAge,
      this.hbTimestamp,
      this.hbSequence,
      this.cfsReachable,
      this.pending,
      this.pendingSessions,
      this.pendingCap,
      this.createsCap,
      this.unwritten,
    ]) {
      g.set(Number.NaN);
    }
    this.stall.set(0);
    this.live.set(0);
  }

  update(v: Verdict, h: History, cfs: CfsCache): void {
    this.live.set(v.live ? 1 : 0);
    for (const reason of REASONS) this.verdict.set({ reason }, reason === v.reason ? 1 : 0);
    this.hbAge.set(v.details.heartbeatAgeMs === null ? Number.NaN : v.details.heartbeatAgeMs / 1000);
    this.hbTimestamp.set(h.lastGood ? h.lastGood.written_at_ms / 1000 : Number.NaN);
    this.hbSequence.set(h.lastGood ? h.lastGood.sequence : Number.NaN);
    if (h.restarts > this.restartsCounted) {
      this.restarts.inc(h.restarts - this.restartsCounted);
      this.restartsCounted = h.restarts;
    }
    for (const reason of CLOCK_RESET_REASONS) {
      const n = h.stall.resets[reason];
      const counted = this.resetsCounted.get(reason) ?? 0;
      if (n > counted) this.clockResets.inc({ reason }, n - counted);
      this.resetsCounted.set(reason, n);
    }
    const o = cfs.latest;
    this.cfsReachable.set(o ? (o.ok ? 1 : 0) : Number.NaN);
    const pending = cfs.lastSuccess?.pendingComponents;
    this.pending.set(pending === undefined ? Number.NaN : pending ? 1 : 0);
    this.stall.set(v.details.stallMs === null ? 0 : v.details.stallMs / 1000);
    const ext = heartbeatExt(h.lastGood);
    for (const state of CREATING_STATES) this.creating.set({ state }, ext.creating?.state === state ? 1 : 0);
    this.pendingSessions.set(ext.pacing?.pending_sessions ?? Number.NaN);
    this.pendingCap.set(ext.pacing?.pending_cap ?? Number.NaN);
    this.createsCap.set(ext.pacing?.creates_per_minute_cap ?? Number.NaN);
    this.unwritten.set(ext.completionsUnwritten ?? Number.NaN);
  }

  countProbe(path: string, code: number): void {
    const known = (PROBE_PATHS as readonly string[]).includes(path) ? path : 'other';
    this.probes.inc({ path: known, code: String(code) });
  }
}
