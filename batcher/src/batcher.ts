/**
 * The batcher's I/O: one cycle = options, check active sessions, collect pending components, send ready batches.
 * Rules live in the pure modules; this module calls CFS, logs, counts, traces and stamps the heartbeat.
 *
 * `createBatcher()` takes the client, clock and sleep as parameters so tests and benchmarks can drive single cycles
 * (`runCycle()`) against the simulator without waiting real intervals; `run(signal)` is the production loop.
 */
import { randomUUID } from 'node:crypto';
import {
  ATTR,
  SPAN,
  errorMessage,
  sessionSpanAttributes,
  withSpan,
  getLogLevel,
  getLogger,
  isCfsError,
  setLogLevel,
  type CfsClient,
  type CfsSession,
  type InvalidRecord,
  type Phase,
  type SessionCreate,
} from '@cfs-batcher/shared';
import { backoffUntil, initialBackoff, isBackingOff, recordCompletions, type BackoffState } from './backoff';
import { BatchBook, batchState, isReadyToSend, sharedTags, type Batch } from './batching';
import { certainlyNotCreated, createFailureReason, logCfsError } from './cfs-log';
import { toBatchComponent, type BatchComponent } from './component';
import { decideCompletion } from './completion';
import { InternPool } from './intern';
import { HeartbeatWriter } from './heartbeat-writer';
import type { TestFaults } from './test-faults';
import { createMetrics, type BatcherMetrics } from './metrics';
import { DEFAULT_OPTIONS, parseOptions, type BatcherOptions } from './options';
import { planRebuild } from './rebuild';
import { SESSION_PREFIX, sessionOutcome } from './session-status';

export type CfsApi = Pick<
  CfsClient,
  | 'listComponents'
  | 'listAllComponents'
  | 'listSessions'
  | 'listAllSessions'
  | 'getSession'
  | 'createSession'
  | 'deleteSession'
  | 'getOptions'
  | 'patchOptions'
  | 'patchComponent'
>;

export interface Clock {
  now(): number;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface BatcherDeps {
  client: CfsApi;
  heartbeatPath?: string;
  clock?: Clock;
  sleep?: Sleep;
  metrics?: BatcherMetrics;
  /** Jitter source in [0,1). */
  random?: () => number;
  newSessionName?: () => string;
  /** Page size for the pending-components list (default: the server's default_page_size). */
  pageSize?: number;
  /** waiting_for_cfs backoff: initial and maximum delay. */
  cfsWaitInitialMs?: number;
  cfsWaitMaxMs?: number;
  /** How often a wait phase stamps the heartbeat. */
  waitStepMs?: number;
  /** Per-batch delay after a failed create: initial, doubling to max. */
  createRetryInitialMs?: number;
  createRetryMaxMs?: number;
  /** Concurrent component PATCHes after a session ends. */
  patchConcurrency?: number;
  /** e2e-suite faults (test-faults.ts); inert unless NODE_ENV=test arms them. */
  testFaults?: TestFaults;
}

export interface CycleResult {
  outcome: 'ok' | 'error';
  durationMs: number;
  pendingSeen: number;
  sessionsCreated: number;
  sessionsCompleted: number;
  error?: unknown;
}

/** A bug or an impossible state: the process must exit and restart (crash-only). */
export class FatalError extends Error {
  override name = 'FatalError';
}

const logMain = getLogger('batcher.__main__');
const logBatch = getLogger('batcher.batch');
const logSessions = getLogger('batcher.cfs.sessions');
const logComponents = getLogger('batcher.cfs.components');
const logOptions = getLogger('batcher.cfs.options');

const PHASE_LOGGER: Partial<Record<Phase, typeof logMain>> = {
  rebuild: logSessions,
  options: logOptions,
  check_status: logSessions,
  collect: logComponents,
  send: logSessions,
};

/** Extra minutes on the complete-sessions max_age window (clock skew between us and CFS). */
const COMPLETE_LIST_MARGIN_MIN = 15;

type PatchItem = { id: string; patch: Parameters<CfsApi['patchComponent']>[1] };

/** Phase -> span name (docs/CONTRACTS.md, "Traces"). */
const PHASE_SPAN: Partial<Record<Phase, string>> = {
  options: SPAN.options,
  check_status: SPAN.checkSessions,
  collect: SPAN.collect,
  send: SPAN.send,
};

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms));
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export function createBatcher(deps: BatcherDeps): Batcher {
  return new Batcher(deps);
}

export class Batcher {
  readonly book = new BatchBook();
  /** Shares repeated values between component snapshots (see intern.ts); a new generation every collection. */
  private readonly pool = new InternPool();
  readonly metrics: BatcherMetrics;
  readonly heartbeat: HeartbeatWriter;
  private readonly client: CfsApi;
  private readonly testFaults: TestFaults;
  private readonly clock: Clock;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly newSessionName: () => string;
  private readonly cfg: Required<
    Pick<BatcherDeps, 'cfsWaitInitialMs' | 'cfsWaitMaxMs' | 'waitStepMs' | 'createRetryInitialMs' | 'createRetryMaxMs' | 'patchConcurrency'>
  >;
  private readonly pageSize: number | undefined;

  options: BatcherOptions = { ...DEFAULT_OPTIONS };
  backoff: BackoffState = initialBackoff();
  rebuilt = false;
  cycles = 0;
  sessionsCreatedTotal = 0;
  private lastSessionCreatedMs: number | null = null;
  private pendingSeen = 0;
  private lastCycle: { completed_at_ms: number; duration_ms: number; outcome: 'ok' | 'error'; error?: string } | null = null;
  private cfsLastSuccess: number | null = null;
  private cfsLastError: { at_ms: number; kind: string; message: string } | null = null;
  private optionProblems = new Set<string>();
  private rejectedComponents = new Map<string, string>();
  private cycleCreated = 0;
  private cycleCompleted = 0;

  constructor(deps: BatcherDeps) {
    this.client = deps.client;
    this.testFaults = deps.testFaults ?? { beforeCycle: () => undefined, sendSuppressed: () => false };
    this.clock = deps.clock ?? { now: () => Date.now() };
    this.sleep = deps.sleep ?? realSleep;
    this.random = deps.random ?? Math.random;
    this.newSessionName = deps.newSessionName ?? (() => `${SESSION_PREFIX}${randomUUID()}`);
    this.metrics = deps.metrics ?? createMetrics({ defaultMetrics: false });
    this.pageSize = deps.pageSize;
    this.cfg = {
      cfsWaitInitialMs: deps.cfsWaitInitialMs ?? 1000,
      cfsWaitMaxMs: deps.cfsWaitMaxMs ?? 60_000,
      waitStepMs: deps.waitStepMs ?? 5000,
      createRetryInitialMs: deps.createRetryInitialMs ?? 30_000,
      createRetryMaxMs: deps.createRetryMaxMs ?? 15 * 60_000,
      patchConcurrency: deps.patchConcurrency ?? 8,
    };
    const now = this.clock.now();
    this.heartbeat = new HeartbeatWriter(deps.heartbeatPath, () => this.clock.now(), now, () => this.heartbeatBody(), () =>
      this.metrics.heartbeatWriteFailures.inc(),
    );
  }

  private now(): number {
    return this.clock.now();
  }

  /** The production loop: cycles until `signal` aborts; CFS outages become waits; anything else is fatal (throws). */
  async run(signal: AbortSignal): Promise<void> {
    await this.heartbeat.stamp('starting');
    let cfsDelay = this.cfg.cfsWaitInitialMs;
    while (!signal.aborted) {
      const result = await this.runCycle(signal);
      if (signal.aborted) break;
      if (result.outcome === 'error') {
        if (!this.rebuilt) logBatch.warn('Rebuilding state was interrupted. Trying again...');
        logMain.info('Waiting for CFS to become available');
        const delay = Math.round(cfsDelay * (0.5 + this.random() / 2));
        // Doubling, but never past one check interval: a few requests per interval cannot flood CFS, and the
        // batcher resumes within one cycle of CFS coming back.
        const cap = Math.max(this.cfg.cfsWaitInitialMs, Math.min(this.cfg.cfsWaitMaxMs, this.options.batcher_check_interval * 1000));
        cfsDelay = Math.min(cap, cfsDelay * 2);
        await this.wait('waiting_for_cfs', delay, signal);
        continue;
      }
      cfsDelay = this.cfg.cfsWaitInitialMs;
      const phase: Phase = isBackingOff(this.backoff, this.now()) ? 'backoff' : 'sleep';
      await this.wait(phase, this.options.batcher_check_interval * 1000, signal);
    }
    await this.heartbeat.stamp('stopping');
  }

  /**
   * Sleeps `ms`; wait phases sleep in steps and stamp the heartbeat after each so the sidecar sees the loop alive.
   * The step count comes from `ms`, not the clock, so an injected sleep that does not advance time cannot spin.
   */
  private async wait(phase: Phase, ms: number, signal: AbortSignal): Promise<void> {
    await this.heartbeat.stamp(phase);
    const stamping = phase === 'waiting_for_cfs' || phase === 'backoff';
    const step = stamping ? Math.max(1, this.cfg.waitStepMs) : Math.max(1, ms);
    const steps = Math.max(1, Math.ceil(ms / step));
    for (let i = 0; i < steps && !signal.aborted; i++) {
      await this.sleep(Math.min(step, ms - i * step), signal);
      if (stamping && !signal.aborted) await this.heartbeat.stamp(phase);
    }
  }

  /**
   * One cycle. CFS failures are logged and returned as outcome 'error' (the caller waits and retries); a bug or an
   * impossible state throws FatalError-or-other after logging 'Unexpected error occurred'.
   */
  async runCycle(signal?: AbortSignal): Promise<CycleResult> {
    this.testFaults.beforeCycle(this.cycles);
    const start = this.now();
    this.cycleCreated = 0;
    this.cycleCompleted = 0;
    let failed: unknown;
    let phase: Phase = 'rebuild';
    try {
      if (!this.rebuilt) {
        phase = 'rebuild';
        await this.heartbeat.stamp('rebuild');
        await withSpan(SPAN.rebuildState, {}, () => this.rebuild(signal));
      }
      await withSpan(SPAN.cycle, { [ATTR.cycleSeq]: this.cycles + 1 }, async () => {
        phase = 'options';
        await this.phase('options', () => this.refreshOptions(signal));
        phase = 'check_status';
        await this.phase('check_status', () => this.checkStatus(signal));
        if (!this.options.batcher_disable) {
          phase = 'collect';
          await this.phase('collect', () => this.collect(signal));
          phase = 'send';
          await this.phase('send', () => (this.testFaults.sendSuppressed() ? Promise.resolve() : this.send(signal)));
        }
        this.checkInvariants();
      });
      this.cfsLastSuccess = this.now();
    } catch (err) {
      if (!isCfsError(err)) {
        logMain.error('Unexpected error occurred', { stack: err instanceof Error ? err.stack : undefined, error: errorMessage(err) });
        this.finishCycle(start, 'error', err);
        await this.heartbeat.stamp();
        throw err;
      }
      failed = err;
      if (err.kind !== 'aborted') {
        logCfsError(PHASE_LOGGER[phase] ?? logMain, err);
        this.cfsLastError = { at_ms: Math.max(0, Math.floor(this.now())), kind: err.kind, message: err.message };
      }
    }
    const result = this.finishCycle(start, failed === undefined ? 'ok' : 'error', failed);
    await this.heartbeat.stamp();
    return result;
  }

  private finishCycle(start: number, outcome: 'ok' | 'error', err?: unknown): CycleResult {
    const end = this.now();
    const durationMs = Math.max(0, end - start);
    this.cycles += 1;
    this.lastCycle = {
      completed_at_ms: Math.max(0, Math.floor(end)),
      duration_ms: durationMs,
      outcome,
      ...(err !== undefined ? { error: errorMessage(err).slice(0, 500) } : {}),
    };
    this.metrics.cycles.inc({ outcome });
    this.metrics.cycleDuration.observe(durationMs / 1000);
    if (outcome === 'ok') this.metrics.lastSuccessfulCycle.set(end / 1000);
    this.updateGauges();
    return {
      outcome,
      durationMs,
      pendingSeen: this.pendingSeen,
      sessionsCreated: this.cycleCreated,
      sessionsCompleted: this.cycleCompleted,
      ...(err !== undefined ? { error: err } : {}),
    };
  }

  private async phase(name: Phase, fn: () => Promise<void>): Promise<void> {
    await this.heartbeat.stamp(name);
    await withSpan(PHASE_SPAN[name] ?? `batcher.${name}`, {}, fn);
  }

  private updateGauges(): void {
    this.metrics.batches.set({ state: 'queued' }, this.book.count('queued'));
    this.metrics.batches.set({ state: 'active' }, this.book.count('active') + this.book.count('uncertain'));
    this.metrics.pendingComponents.set(this.pendingSeen);
    this.metrics.backoffSeconds.set(isBackingOff(this.backoff, this.now()) ? this.backoff.currentS : 0);
    this.metrics.disabled.set(this.options.batcher_disable ? 1 : 0);
  }

  private heartbeatBody() {
    const now = this.now();
    const active = isBackingOff(this.backoff, now);
    return {
      cycle: this.cycles,
      last_cycle: this.lastCycle,
      options: {
        batcher_check_interval: this.options.batcher_check_interval,
        batch_window: this.options.batch_window,
        batch_size: this.options.batch_size,
        batcher_pending_timeout: this.options.batcher_pending_timeout,
      },
      disabled: this.options.batcher_disable,
      backoff: { active, seconds: active ? this.backoff.currentS : 0, until_ms: backoffUntil(this.backoff, now) },
      cfs: { last_success_ms: this.cfsLastSuccess, last_error: this.cfsLastError },
      counters: {
        pending_seen: this.pendingSeen,
        batches_queued: this.book.count('queued'),
        batches_active: this.book.count('active') + this.book.count('uncertain'),
        sessions_created_total: this.sessionsCreatedTotal,
        last_session_created_ms: this.lastSessionCreatedMs,
      },
    };
  }

  private reportInvalid(log: typeof logMain, kind: 'component' | 'session', invalid: readonly InvalidRecord[]): void {
    for (const r of invalid) {
      this.metrics.invalidRecords.inc({ kind });
      log.warn(`Skipping invalid ${kind} record ${r.id ?? `#${r.index}`}: ${r.problem}`);
    }
  }

  // ---- rebuild ------------------------------------------------------------------------------------------------

  /** Adopts the incomplete `batcher-` sessions left by a previous instance; their members become busy. */
  async rebuild(signal?: AbortSignal): Promise<void> {
    const { sessions, invalid } = await this.client.listAllSessions({ name_contains: SESSION_PREFIX }, { signal });
    this.reportInvalid(logSessions, 'session', invalid);
    const plan = planRebuild(sessions);
    for (const s of plan.skipped) logBatch.warn(`Ignoring incomplete session ${s.name} while rebuilding state: ${s.reason}`);
    const ids = [...new Set(plan.targets.flatMap((t) => t.memberIds))];
    const snapshots =
      ids.length > 0
        ? await this.readComponents(ids, (id, reason) => `Component ${id} has an unusable record (${reason}); tracking it as busy without a snapshot`, signal)
        : new Map<string, BatchComponent>();
    const now = this.now();
    for (const t of plan.targets) {
      const members = new Map<string, BatchComponent | null>(t.memberIds.map((id) => [id, snapshots.get(id) ?? null]));
      const { alreadyBusy } = this.book.addRebuilt(t.sessionName, t.configName, t.configLimit, members, now);
      for (const id of alreadyBusy) logBatch.warn(`Component ${id} is in more than one incomplete session (${t.sessionName})`);
    }
    this.rebuilt = true;
    logBatch.info(`Rebuilt previous state.  Found ${plan.targets.length} incomplete sessions/batches.`);
  }

  // ---- options ------------------------------------------------------------------------------------------------

  private async refreshOptions(signal?: AbortSignal): Promise<void> {
    const raw = await this.client.getOptions({ signal });
    const parsed = parseOptions(raw, this.options);
    const current = new Set<string>();
    for (const p of parsed.problems) {
      current.add(p.message);
      if (!this.optionProblems.has(p.message)) {
        this.metrics.invalidRecords.inc({ kind: 'options' });
        logOptions.warn(p.message, { option: p.option });
      }
    }
    this.optionProblems = current;
    this.options = parsed.options;
    const missing = Object.entries(parsed.missing);
    if (missing.length > 0) {
      for (const [k, v] of missing) logOptions.info(`Setting option ${k} to ${String(v)}.`);
      try {
        await this.client.patchOptions(parsed.missing, { signal });
      } catch (err) {
        // Not fatal: the defaults are already in force here; the PATCH is tried again next cycle.
        if (!isCfsError(err) || err.kind === 'aborted') throw err;
        logCfsError(logOptions, err);
      }
    }
    this.applyLogLevel();
    this.updateGauges();
  }

  private applyLogLevel(): void {
    const want = this.options.logging_level;
    const have = getLogLevel();
    if (want === have) return;
    try {
      logMain.info(`Changing logging level from ${have} to ${want}`);
      setLogLevel(want);
      logMain.info(`Logging level changed from ${have} to ${want}`);
    } catch (err) {
      logMain.error(`Error updating logging level: ${errorMessage(err)}`);
    }
  }

  // ---- check_status ---------------------------------------------------------------------------------------------

  /**
   * Follows active sessions with paged lists instead of one GET per session: pending and running every cycle, and
   * complete (limited by max_age to the time our oldest session has been tracked, plus a margin) only when some
   * tracked session is in neither. A session still unseen has finished long ago or was deleted: one GET tells
   * which (404 = deleted). That GET is also the guard against a list that does not show a session yet: nothing is
   * released on absence alone.
   */
  private async checkStatus(signal?: AbortSignal): Promise<void> {
    logBatch.debug('Checking batch session status');
    const active = this.book.all().filter((b) => batchState(b) === 'active');
    if (active.length === 0) return;
    const listed = new Map<string, CfsSession>();
    const unreadable = new Set<string>();
    const list = async (filter: Parameters<CfsApi['listSessions']>[0]): Promise<void> => {
      for await (const page of this.client.listSessions(filter, { signal })) {
        for (const s of page.sessions) listed.set(s.name, s);
        for (const r of page.invalid) if (r.id) unreadable.add(r.id);
        this.reportInvalid(logSessions, 'session', page.invalid);
      }
    };
    await list({ name_contains: SESSION_PREFIX, status: 'pending' });
    await list({ name_contains: SESSION_PREFIX, status: 'running' });
    const unseen = active.filter((b) => !listed.has(b.sessionName!) && !unreadable.has(b.sessionName!));
    if (unseen.length > 0) {
      const oldest = Math.min(...unseen.map((b) => b.sessionStart ?? this.now()));
      const minutes = Math.ceil(Math.max(0, this.now() - oldest) / 60_000) + COMPLETE_LIST_MARGIN_MIN;
      await list({ name_contains: SESSION_PREFIX, status: 'complete', max_age: `${minutes}m` });
    }
    const results: boolean[] = [];
    try {
      await this.followSessions(active, listed, unreadable, results, signal);
    } finally {
      // Completions already released count toward backoff even if a later step failed the cycle.
      this.recordResults(results);
    }
  }

  private async followSessions(
    active: Batch[],
    listed: ReadonlyMap<string, CfsSession>,
    unreadable: ReadonlySet<string>,
    results: boolean[],
    signal?: AbortSignal,
  ): Promise<void> {
    const finished: { b: Batch; outcome: 'complete' | 'failed' }[] = [];
    for (const b of active) {
      const name = b.sessionName!;
      if (unreadable.has(name)) continue; // unreadable record: status unknown, look again next cycle
      let session = listed.get(name);
      if (!session) {
        try {
          session = await this.client.getSession(name, { signal });
        } catch (err) {
          if (isCfsError(err) && err.isNotFound) {
            logBatch.info(`Session ${name} no longer exists`);
            this.finish(b, false, 'deleted', results);
            continue;
          }
          if (isCfsError(err) && ((err.kind === 'http' && (err.status ?? 500) < 500) || err.kind === 'invalid-response')) {
            logBatch.warn(`Unexpected exception checking session status: ${err.message}`);
            continue;
          }
          throw err;
        }
      }
      const st = session.status?.session;
      logSessions.debug(`Session status for ${name} is status:${st?.status ?? ''} completed:${st?.succeeded ?? ''}`);
      const outcome = sessionOutcome(session);
      if (outcome === 'complete' || outcome === 'failed') {
        finished.push({ b, outcome });
      } else if (outcome === 'pending' && this.now() - (b.sessionStart ?? 0) > this.options.batcher_pending_timeout * 1000) {
        logBatch.warn(`Session ${name} is stuck in pending and will be deleted.`);
        try {
          await this.client.deleteSession(name, { signal });
        } catch (err) {
          if (!(isCfsError(err) && err.isNotFound)) throw err;
        }
        this.finish(b, false, 'pending_timeout', results);
      }
    }
    if (finished.length === 0) return;
    // One ids= read (chunked by the client) for the members of every finished batch, not one per batch.
    const current = await this.readMembers(finished.map((f) => f.b), signal);
    const patches: PatchItem[] = [];
    for (const f of finished) patches.push(...this.completionPatches(f.b, f.outcome, current));
    await this.patchAll(patches, signal);
    for (const f of finished) this.finish(f.b, f.outcome === 'complete', f.outcome === 'complete' ? 'succeeded' : 'failed', results);
  }

  private readMembers(batches: readonly Batch[], signal?: AbortSignal): Promise<Map<string, BatchComponent>> {
    const ids = [...new Set(batches.flatMap((b) => [...b.members.keys()]))];
    return this.readComponents(ids, (id, reason) => `Component ${id} skipped after its session ended: ${reason}`, signal);
  }

  /**
   * One ids= read (chunked by the client), page by page, keeping only the compact form: at 50k members the raw
   * records would cost ~20x more than the snapshots.
   */
  private async readComponents(
    ids: string[],
    unusable: (id: string, reason: string) => string,
    signal?: AbortSignal,
  ): Promise<Map<string, BatchComponent>> {
    const out = new Map<string, BatchComponent>();
    for await (const page of this.client.listComponents({ ids, config_details: true, state_details: true }, { signal })) {
      this.reportInvalid(logComponents, 'component', page.invalid);
      for (const raw of page.components) {
        const r = toBatchComponent(raw, false, this.pool);
        if (r.ok) out.set(r.component.id, r.component);
        else logComponents.warn(unusable(r.id, r.reason));
      }
    }
    return out;
  }

  private finish(b: Batch, success: boolean, result: 'succeeded' | 'failed' | 'deleted' | 'pending_timeout', results: boolean[]): void {
    this.book.release(b);
    results.push(success);
    this.cycleCompleted += 1;
    this.metrics.sessionsCompleted.inc({ result });
  }

  /** The skipped/failed writes for members Ansible did not record (see completion.ts). */
  private completionPatches(b: Batch, result: 'complete' | 'failed', records: ReadonlyMap<string, BatchComponent>): PatchItem[] {
    const current = [...b.members.keys()].map((id) => records.get(id)).filter((c): c is BatchComponent => c !== undefined);
    const decision = decideCompletion(result, b.sessionName!, b.members, current);
    const patches: PatchItem[] = [];
    for (const a of decision.actions) {
      logBatch.debug(`Checking incomplete component ${a.id}`);
      switch (a.kind) {
        case 'changed':
          logBatch.debug(`Desired config changed for component ${a.id}`);
          break;
        case 'skip':
          logBatch.debug(`Updating component ${a.id} for skipped layers (session success)`);
          for (const patch of a.patches) patches.push({ id: a.id, patch });
          break;
        case 'fail':
          logBatch.debug(`Incrementing error count for component ${a.id} due to session failure`);
          patches.push({ id: a.id, patch: a.patch });
          break;
        case 'ansible-failure':
          logBatch.debug(`Component ${a.id} requires additional configuration`);
          break;
        case 'no-snapshot':
          logBatch.debug(`Component ${a.id} has no start snapshot; leaving it pending`);
          break;
      }
    }
    return patches;
  }

  /** PATCHes a few at a time; a failed PATCH is logged and left (the component stays pending and is re-batched). */
  private async patchAll(items: PatchItem[], signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < items.length; i += this.cfg.patchConcurrency) {
      await Promise.all(
        items.slice(i, i + this.cfg.patchConcurrency).map(async ({ id, patch }) => {
          try {
            await this.client.patchComponent(id, patch, { signal });
          } catch (err) {
            if (!isCfsError(err) || err.kind === 'aborted') throw err;
            logCfsError(logComponents, err);
          }
        }),
      );
    }
  }

  private recordResults(results: readonly boolean[]): void {
    if (results.length > 0) {
      logBatch.info(`${results.length} batches/sessions have completed`);
      const { state, event } = recordCompletions(this.backoff, results, this.now(), this.options.batcher_max_backoff);
      this.backoff = state;
      if (event?.kind === 'halted') {
        logBatch.warn(`The 20 most recent configuration sessions have failed. Halting session creation for ${event.seconds} seconds`);
      } else if (event?.kind === 'resumed') {
        logBatch.info('A session has succeeded.  Resuming normal operations');
      }
    }
  }

  // ---- collect --------------------------------------------------------------------------------------------------

  /** Pages every enabled pending component into batches; queued members no longer pending are dropped. */
  private async collect(signal?: AbortSignal): Promise<void> {
    logBatch.debug('Checking components for new configuration states');
    const seen = new Set<string>();
    const rejected = new Map<string, string>();
    const now = this.now();
    this.pool.rotate();
    for await (const page of this.client.listComponents(
      { enabled: true, status: 'pending', config_details: true, state_details: true },
      { signal, ...(this.pageSize !== undefined ? { pageSize: this.pageSize } : {}) },
    )) {
      logComponents.debug(`Received data for ${page.components.length} components`);
      this.reportInvalid(logComponents, 'component', page.invalid);
      for (const raw of page.components) {
        if (raw.enabled === false) continue;
        const r = toBatchComponent(raw, true, this.pool);
        if (!r.ok) {
          rejected.set(r.id, r.reason);
          this.metrics.invalidRecords.inc({ kind: 'component' });
          // Logged as a warning when first seen (or changed); repeats every cycle would flood the log.
          const line = `Skipping component ${r.id}: ${r.reason}`;
          if (this.rejectedComponents.get(r.id) === r.reason) logComponents.debug(line);
          else logComponents.warn(line);
          continue;
        }
        seen.add(r.component.id);
        this.book.add(r.component, this.options.batch_size, now);
      }
    }
    this.rejectedComponents = rejected;
    const dropped = this.book.prune(seen);
    if (dropped.length > 0) logBatch.debug(`Dropped ${dropped.length} queued components that are no longer pending`);
    // Schedulable pending components only: a record the batcher must skip stays pending in CFS, and the sidecar's
    // progress rule must not restart the batcher for data a restart cannot fix.
    this.pendingSeen = seen.size;
    logBatch.debug(`Found ${seen.size} components that need updates`);
  }

  // ---- send -----------------------------------------------------------------------------------------------------

  private async send(signal?: AbortSignal): Promise<void> {
    const now = this.now();
    if (isBackingOff(this.backoff, now)) return;
    logBatch.debug('Sending completed batches');
    let sent = 0;
    for (const b of this.book.all()) {
      if (!isReadyToSend(b, this.options.batch_size, this.options.batch_window, this.now())) continue;
      const r = await this.sendBatch(b, signal);
      if (r === 'sent') sent += 1;
      if (r === 'stop') break;
    }
    if (sent > 0) logBatch.info(`Successfully submitted ${sent} batches for configuration`);
  }

  private retryLater(b: Batch): void {
    b.createFailures += 1;
    const delay = Math.min(this.cfg.createRetryMaxMs, this.cfg.createRetryInitialMs * 2 ** Math.min(30, b.createFailures - 1));
    b.nextAttemptAt = this.now() + delay;
  }

  private adopted(b: Batch, name: string): void {
    this.book.markActive(b, name, this.now());
    b.createFailures = 0;
    b.nextAttemptAt = 0;
    this.sessionsCreatedTotal += 1;
    this.cycleCreated += 1;
    this.lastSessionCreatedMs = Math.max(0, Math.floor(this.now()));
    this.metrics.sessionsCreated.inc();
  }

  /** 'sent' | 'failed' (this batch only) | 'stop' (CFS in trouble: send nothing more this cycle). */
  private async sendBatch(b: Batch, signal?: AbortSignal): Promise<'sent' | 'failed' | 'stop'> {
    let name: string | undefined;
    if (b.uncertainName !== null) {
      // An earlier POST may have created it: look before creating again, so no duplicate targets these nodes.
      name = b.uncertainName;
      try {
        await this.client.getSession(name, { signal });
        logSessions.info(`Session ${name} exists from an earlier attempt; tracking it`);
        this.adopted(b, name);
        return 'sent';
      } catch (err) {
        if (!isCfsError(err) || err.kind === 'aborted') throw err;
        if (!err.isNotFound) {
          logCfsError(logSessions, err);
          this.cfsLastError = { at_ms: Math.max(0, Math.floor(this.now())), kind: err.kind, message: err.message };
          this.retryLater(b);
          return 'stop';
        }
        // Confirmed absent. Its members were held busy (not refreshed) while uncertain: let the next collect
        // refresh, move or drop them before anything is created, so no session goes out with stale members.
        this.book.requeue(b);
        return 'failed';
      }
    }
    name ??= this.newSessionName();
    const ids = [...b.members.keys()];
    const tags = sharedTags(b.members.values());
    const body: SessionCreate = {
      name,
      configuration_name: b.configName,
      configuration_limit: b.configLimit,
      ansible_limit: ids.join(','),
      target: { definition: 'dynamic' },
      ...(tags ? { tags } : {}),
    };
    logSessions.debug(`Submitting a session to CFS: ${JSON.stringify(body)}`);
    const attrs = sessionSpanAttributes({ name, configuration: b.configName, batchSize: ids.length, limit: b.configLimit });
    try {
      await withSpan(SPAN.sessionCreate, attrs, () => this.client.createSession(body, { signal }));
      this.adopted(b, name);
      return 'sent';
    } catch (err) {
      if (!isCfsError(err) || err.kind === 'aborted') throw err;
      this.metrics.sessionCreateFailures.inc({ reason: createFailureReason(err) });
      logCfsError(logSessions, err);
      // Reported in the heartbeat: the sidecar must read a refused create as CFS trouble, not as a stalled loop.
      this.cfsLastError = { at_ms: Math.max(0, Math.floor(this.now())), kind: err.kind, message: err.message };
      if (err.kind === 'http' && err.status === 409) {
        // The name exists already (e.g. our own earlier POST): confirm by lookup on the next attempt.
        this.book.markUncertain(b, name);
        return 'failed';
      }
      if (certainlyNotCreated(err)) {
        this.retryLater(b);
        return err.kind === 'http' ? 'failed' : 'stop';
      }
      this.book.markUncertain(b, name);
      this.retryLater(b);
      return 'stop';
    }
  }

  // ---- invariants ---------------------------------------------------------------------------------------------

  /** Cheap consistency checks; a violation is a bug, and the process should restart rather than schedule wrongly. */
  private checkInvariants(): void {
    for (const b of this.book.all()) {
      if (b.members.size === 0 && batchState(b) === 'queued') throw new FatalError(`empty queued batch ${b.id}`);
      if (batchState(b) === 'queued' && b.members.size > 0) {
        for (const id of b.members.keys()) {
          if (this.book.ownerOf(id) !== b) throw new FatalError(`component ${id} is queued in batch ${b.id} but owned elsewhere`);
        }
      }
    }
  }
}
