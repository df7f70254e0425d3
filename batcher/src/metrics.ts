/** The batcher's Prometheus metrics (names fixed in docs/CONTRACTS.md), on a registry of its own. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Why a session create failed; the runbook has a line for each (docs/runbook.md, CfsBatcherSessionCreatesFailing). */
export const CREATE_FAILURE_REASONS = [
  'http_400',
  'http_auth',
  'http_404',
  'http_409',
  'http_4xx',
  'http_5xx',
  'timeout',
  'unreachable',
  'invalid',
] as const;
export type CreateFailureReason = (typeof CREATE_FAILURE_REASONS)[number];
export const COMPLETION_RESULTS = ['succeeded', 'failed', 'deleted', 'pending_timeout'] as const;
export type CompletionResult = (typeof COMPLETION_RESULTS)[number];
export const INVALID_RECORD_KINDS = ['component', 'session', 'options'] as const;

/** Every known label value starts at 0, so dashboards show 0 rather than "No data" on a healthy cluster. */
function zeroed<L extends string>(counter: Counter<L>, label: L, values: readonly string[]): Counter<L> {
  for (const v of values) counter.inc({ [label]: v } as Partial<Record<L, string>>, 0);
  return counter;
}

export interface BatcherMetrics {
  registry: Registry;
  cycles: Counter<'outcome'>;
  cycleDuration: Histogram;
  lastSuccessfulCycle: Gauge;
  sessionsCreated: Counter;
  sessionCreateFailures: Counter<'reason'>;
  sessionsCompleted: Counter<'result'>;
  batches: Gauge<'state'>;
  pendingComponents: Gauge;
  invalidRecords: Counter<'kind'>;
  backoffSeconds: Gauge;
  disabled: Gauge;
  pendingSessions: Gauge;
  pacingLimited: Gauge;
  pacingAllowance: Gauge;
  completionsUnwritten: Gauge;
  cfsRequests: Counter<'method' | 'route' | 'status'>;
  cfsRequestDuration: Histogram<'method' | 'route'>;
  heartbeatWriteFailures: Counter;
  foreignSessions: Gauge;
  standingDown: Gauge;
  standDowns: Counter;
  /** Feed for CfsClientOptions.onRequest. */
  observeRequest(r: { method: string; route: string; status: string; durationMs: number }): void;
}

export function createMetrics(opts: { version?: string; defaultMetrics?: boolean } = {}): BatcherMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const cfsRequests = new Counter({
    name: 'cfs_batcher_cfs_requests_total',
    help: 'Requests to the CFS API',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const cfsRequestDuration = new Histogram({
    name: 'cfs_batcher_cfs_request_duration_seconds',
    help: 'CFS API request duration',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const buildInfo = new Gauge({
    name: 'cfs_batcher_build_info',
    help: 'Build information',
    labelNames: ['version'] as const,
    registers,
  });
  buildInfo.set({ version: opts.version ?? '0.1.0' }, 1);
  const metrics: BatcherMetrics = {
    registry,
    cycles: new Counter({
      name: 'cfs_batcher_cycles_total',
      help: 'Main-loop cycles',
      labelNames: ['outcome'] as const,
      registers,
    }),
    cycleDuration: new Histogram({
      name: 'cfs_batcher_cycle_duration_seconds',
      help: 'Main-loop cycle duration',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    lastSuccessfulCycle: new Gauge({
      name: 'cfs_batcher_last_successful_cycle_timestamp_seconds',
      help: 'Completion time of the last successful cycle',
      registers,
    }),
    sessionsCreated: new Counter({ name: 'cfs_batcher_sessions_created_total', help: 'Sessions created', registers }),
    sessionCreateFailures: new Counter({
      name: 'cfs_batcher_session_create_failures_total',
      help: 'Failed session creates',
      labelNames: ['reason'] as const,
      registers,
    }),
    sessionsCompleted: new Counter({
      name: 'cfs_batcher_sessions_completed_total',
      help: 'Sessions that ended',
      labelNames: ['result'] as const,
      registers,
    }),
    batches: new Gauge({
      name: 'cfs_batcher_batches',
      help: 'Batches by state',
      labelNames: ['state'] as const,
      registers,
    }),
    pendingComponents: new Gauge({
      name: 'cfs_batcher_pending_components',
      help: 'Schedulable pending components seen in the last collection',
      registers,
    }),
    invalidRecords: new Counter({
      name: 'cfs_batcher_invalid_records_total',
      help: 'Records from CFS that were rejected',
      labelNames: ['kind'] as const,
      registers,
    }),
    backoffSeconds: new Gauge({
      name: 'cfs_batcher_backoff_seconds',
      help: 'Current session-creation backoff',
      registers,
    }),
    disabled: new Gauge({ name: 'cfs_batcher_disabled', help: '1 while batcher_disable is true', registers }),
    pendingSessions: new Gauge({
      name: 'cfs_batcher_pending_sessions',
      help: 'Batcher sessions still pending in CFS (not yet started by the operator)',
      registers,
    }),
    pacingLimited: new Gauge({
      name: 'cfs_batcher_pacing_limited',
      help: '1 while session creation is held by the pending-sessions allowance or the creates-per-minute cap',
      registers,
    }),
    pacingAllowance: new Gauge({
      name: 'cfs_batcher_pacing_allowance',
      help: 'Batcher sessions allowed pending in CFS now (follows how promptly the operator starts them; 0 = pacing off)',
      registers,
    }),
    completionsUnwritten: new Gauge({
      name: 'cfs_batcher_completions_unwritten',
      help: 'Components whose completion PATCH failed and is queued for retry',
      registers,
    }),
    cfsRequests,
    cfsRequestDuration,
    heartbeatWriteFailures: new Counter({
      name: 'cfs_batcher_heartbeat_write_failures_total',
      help: 'Failed heartbeat writes',
      registers,
    }),
    foreignSessions: new Gauge({
      name: 'cfs_batcher_foreign_sessions',
      help: "Another batcher's batcher- sessions pending or running in CFS (created after this process started)",
      registers,
    }),
    standingDown: new Gauge({
      name: 'cfs_batcher_standing_down',
      help: '1 while this batcher creates nothing because another batcher is creating sessions',
      registers,
    }),
    standDowns: new Counter({
      name: 'cfs_batcher_stand_downs_total',
      help: 'Times this batcher stood down for another batcher',
      registers,
    }),
    observeRequest(r) {
      cfsRequests.inc({ method: r.method, route: r.route, status: r.status });
      cfsRequestDuration.observe({ method: r.method, route: r.route }, r.durationMs / 1000);
    },
  };
  zeroed(metrics.sessionCreateFailures, 'reason', CREATE_FAILURE_REASONS);
  zeroed(metrics.sessionsCompleted, 'result', COMPLETION_RESULTS);
  zeroed(metrics.invalidRecords, 'kind', INVALID_RECORD_KINDS);
  return metrics;
}
