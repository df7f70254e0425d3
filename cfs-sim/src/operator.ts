/**
 * The simulated cfs-operator + AEE: sessions go pending -> running -> complete after configurable
 * delays; on completion the selected layers run in order over the existing hosts of ansible.limit and component
 * state is written the way the Ansible callback plugin writes it. Real timers drive it; tests can pause() it and
 * step() it deterministically instead. What each session and host should do comes from the scripted outcomes
 * (outcomes.ts); this class only moves sessions through their stages.
 */
import { randomUUID } from 'node:crypto';
import { getLogger } from '@cfs-batcher/shared';
import { runLayers } from './ansible-run';
import type { RecordExtra, SessionHistory } from './history';
import { OutcomeRules, type HostOutcome, type SessionMode, type SessionModeRule } from './outcomes';
import { memberSnapshots } from './snapshot';
import type { SimState } from './state';
import { localIsoSeconds } from './time';
import type { Session, Succeeded } from './types';

export { selectLayers } from './ansible-run';

const log = getLogger('cfs-sim.operator');

export interface OperatorSettings {
  /** A session starts this long after its create, plus up to `pendingJitterMs` more (uniform, drawn per session). */
  pendingMs: number;
  pendingJitterMs: number;
  runningMs: number;
  /** Timer resolution for the automatic mode. */
  tickMs: number;
  /**
   * Most sessions the operator starts (pending -> running, job created) per second, in creation order; 0 = no cap.
   * Models "sessions created faster than the CFS operator can keep up": the rest stay pending with no job.
   */
  maxStartsPerSecond: number;
}

export const DEFAULT_OPERATOR_SETTINGS: OperatorSettings = {
  pendingMs: 200,
  pendingJitterMs: 0,
  runningMs: 500,
  tickMs: 20,
  maxStartsPerSecond: 0,
};

interface Active {
  mode: SessionMode;
  stage: 'pending' | 'running';
  enteredMs: number;
  /** Its share of the jitter (0..1): a change of the settings mid-run applies to sessions already pending. */
  jitter: number;
}

export class SimOperator {
  readonly settings: OperatorSettings;
  private readonly active = new Map<string, Active>();
  private readonly rules = new OutcomeRules();
  private timer: NodeJS.Timeout | null = null;
  private pausedFlag = false;
  private readonly now: () => number;
  /** When the last starts happened (at most maxStartsPerSecond entries within the last second). */
  private starts: number[] = [];

  constructor(
    private readonly state: SimState,
    private readonly history: SessionHistory,
    settings: Partial<OperatorSettings> = {},
    now: () => number = Date.now,
  ) {
    this.settings = { ...DEFAULT_OPERATOR_SETTINGS, ...settings };
    this.now = now;
  }

  // ---- scripting -------------------------------------------------------------------------------------------

  setDelays(
    d: Partial<Pick<OperatorSettings, 'pendingMs' | 'pendingJitterMs' | 'runningMs' | 'maxStartsPerSecond'>>,
  ): void {
    if (d.pendingJitterMs !== undefined) this.settings.pendingJitterMs = d.pendingJitterMs;
    if (d.maxStartsPerSecond !== undefined) this.settings.maxStartsPerSecond = d.maxStartsPerSecond;
    if (d.pendingMs !== undefined) this.settings.pendingMs = d.pendingMs;
    if (d.runningMs !== undefined) this.settings.runningMs = d.runningMs;
  }

  /** Outcome for a component on every layer, or on one layer index. */
  setComponentOutcome(id: string, outcome: HostOutcome, layer?: number): void {
    this.rules.setComponentOutcome(id, outcome, layer);
  }

  /** Outcome for every host on a configuration's layer (or on every layer). */
  setLayerOutcome(configuration: string, layer: number | undefined, outcome: HostOutcome): void {
    this.rules.setLayerOutcome(configuration, layer, outcome);
  }

  addSessionMode(rule: SessionModeRule): void {
    this.rules.addSessionMode(rule);
  }

  clearOutcomes(): void {
    this.rules.clear();
  }

  outcomeFor(host: string, configuration: string, layer: number): HostOutcome {
    return this.rules.outcomeFor(host, configuration, layer);
  }

  // ---- lifecycle hooks (called by the API) -------------------------------------------------------------------

  /** `extra.members`: snapshots taken when the POST arrived (default: now). */
  onCreated(s: Session, extra: RecordExtra = {}): void {
    const mode = this.rules.pickMode(s);
    this.active.set(s.name, { mode, stage: 'pending', enteredMs: this.now(), jitter: Math.random() });
    const hosts = s.ansible.limit.split(',').filter((h) => h !== '');
    this.history.record(s, mode, this.now(), {
      ...extra,
      members: extra.members ?? memberSnapshots(this.state, hosts),
    });
  }

  onDeleted(name: string): void {
    this.active.delete(name);
    this.history.update(name, { deleted_ms: this.now() });
  }

  activeSessions(): Array<{ name: string; mode: SessionMode; stage: string }> {
    return [...this.active].map(([name, a]) => ({ name, mode: a.mode, stage: a.stage }));
  }

  // ---- driving -------------------------------------------------------------------------------------------------

  get paused(): boolean {
    return this.pausedFlag;
  }

  pause(): void {
    this.pausedFlag = true;
  }

  resume(): void {
    this.pausedFlag = false;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.pausedFlag) this.tick(this.now());
    }, this.settings.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Applies every transition that is due at `nowMs`. */
  tick(nowMs: number): void {
    for (const [name, a] of [...this.active]) {
      const s = this.state.sessions.get(name);
      if (!s) {
        this.active.delete(name);
        continue;
      }
      if (a.stage === 'pending' && a.mode !== 'stuck_pending') {
        const capped = this.settings.maxStartsPerSecond > 0;
        if (!capped) this.pickUp(s);
        const due = this.settings.pendingMs + a.jitter * this.settings.pendingJitterMs;
        if (nowMs - a.enteredMs >= due && this.mayStart(nowMs)) {
          this.pickUp(s);
          this.toRunning(s, a, nowMs);
        }
      } else if (a.stage === 'running' && a.mode !== 'hang_running' && nowMs - a.enteredMs >= this.settings.runningMs) {
        this.complete(s, a, nowMs);
      }
    }
  }

  /**
   * Moves active sessions (all, or the named one) one stage forward now, ignoring delays. Stuck/hung sessions do
   * not move. Returns how many moved.
   */
  step(name?: string): number {
    let moved = 0;
    const nowMs = this.now();
    for (const [n, a] of [...this.active]) {
      if (name !== undefined && n !== name) continue;
      const s = this.state.sessions.get(n);
      if (!s) continue;
      if (a.stage === 'pending' && a.mode !== 'stuck_pending') {
        this.pickUp(s);
        this.toRunning(s, a, nowMs);
        moved++;
      } else if (a.stage === 'running' && a.mode !== 'hang_running') {
        this.complete(s, a, nowMs);
        moved++;
      }
    }
    return moved;
  }

  /** Steps until nothing moves (bounded): every movable session ends complete. Returns sessions completed. */
  runToCompletion(name?: string): number {
    let completed = 0;
    for (let i = 0; i < 3; i++) {
      const before = this.active.size;
      if (this.step(name) === 0) break;
      completed += before - this.active.size;
    }
    return completed;
  }

  /** The k8s Job disappears: the monitor reports complete/unknown with no writes. */
  vanish(name: string): boolean {
    const a = this.active.get(name);
    const s = this.state.sessions.get(name);
    if (!a || !s) return false;
    this.finish(s, 'unknown', this.now());
    return true;
  }

  // ---- internals -------------------------------------------------------------------------------------------------

  /** The start rate cap: true (and counted) when one more start fits in the last second. */
  private mayStart(nowMs: number): boolean {
    const cap = this.settings.maxStartsPerSecond;
    if (cap <= 0) return true;
    this.starts = this.starts.filter((t) => nowMs - t < 1000);
    if (this.starts.length >= cap) return false;
    this.starts.push(nowMs);
    return true;
  }

  private pickUp(s: Session): void {
    if (!s.status.session.job) s.status.session.job = `cfs-${randomUUID()}`;
  }

  private toRunning(s: Session, a: Active, nowMs: number): void {
    a.stage = 'running';
    a.enteredMs = nowMs;
    s.status.session.status = 'running';
    this.history.update(s.name, { status: 'running', running_ms: nowMs });
    log.debug('session running', { session: s.name });
  }

  private complete(s: Session, a: Active, nowMs: number): void {
    if (a.mode === 'clone_failure') return this.finish(s, 'false', nowMs);
    if (a.mode === 'job_vanishes') return this.finish(s, 'unknown', nowMs);
    this.finish(s, runLayers(this.state, s, (h, c, l) => this.outcomeFor(h, c, l), nowMs) ? 'true' : 'false', nowMs);
  }

  private finish(s: Session, succeeded: Succeeded, nowMs: number): void {
    this.active.delete(s.name);
    s.status.session.status = 'complete';
    s.status.session.succeeded = succeeded;
    s.status.session.completion_time = localIsoSeconds(nowMs);
    this.history.update(s.name, { status: 'complete', succeeded, completed_ms: nowMs });
    log.debug('session complete', { session: s.name, succeeded });
  }
}
