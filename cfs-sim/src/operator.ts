/**
 * The simulated cfs-operator + AEE (notes 2.2-2.4): sessions go pending -> running -> complete after configurable
 * delays; on completion the selected layers run in order over the existing hosts of ansible.limit and component
 * state is written the way the Ansible callback plugin writes it. Real timers drive it; tests can pause() it and
 * step() it deterministically instead.
 */
import { randomUUID } from 'node:crypto';
import { getLogger } from '@cfs-batcher/shared';
import { applyComponentPatch } from './component-patch';
import type { SessionHistory } from './history';
import type { SimState } from './state';
import { localIsoSeconds } from './time';
import type { ConfigLayer, Session, Succeeded } from './types';

const log = getLogger('cfs-sim.operator');

/** Per-host result of one layer: ok (applied, error_count=0), fail (_failed, error_count+1), incomplete, skip (no write). */
export type HostOutcome = 'ok' | 'fail' | 'skip' | 'incomplete';
export const HOST_OUTCOMES: readonly HostOutcome[] = ['ok', 'fail', 'skip', 'incomplete'];

/**
 * Whole-session modes: clone_failure (complete/false, no writes), job_vanishes (complete/unknown, no writes),
 * stuck_pending (never leaves pending, job never set), hang_running (running forever).
 */
export type SessionMode = 'normal' | 'clone_failure' | 'job_vanishes' | 'stuck_pending' | 'hang_running';
export const SESSION_MODES: readonly SessionMode[] = ['normal', 'clone_failure', 'job_vanishes', 'stuck_pending', 'hang_running'];

export interface SessionModeRule {
  mode: SessionMode;
  /** Only sessions for this configuration. */
  configuration?: string;
  nameContains?: string;
  /** Applies to this many sessions, then is used up (unset = forever). */
  count?: number;
}

export interface OperatorSettings {
  pendingMs: number;
  runningMs: number;
  /** Timer resolution for the automatic mode. */
  tickMs: number;
}

export const DEFAULT_OPERATOR_SETTINGS: OperatorSettings = { pendingMs: 200, runningMs: 500, tickMs: 20 };

interface Active {
  mode: SessionMode;
  stage: 'pending' | 'running';
  enteredMs: number;
}

/** configuration.limit -> layer indices, as the operator reads it (digits = sorted indices; else names). */
export function selectLayers(limit: string, layers: ConfigLayer[]): number[] {
  const parts = limit.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) return layers.map((_, i) => i);
  if (parts.every((p) => /^\d+$/.test(p))) {
    return Array.from(new Set(parts.map(Number))).filter((i) => i < layers.length).sort((a, b) => a - b);
  }
  return layers.map((l, i) => (l.name && limit.includes(l.name) ? i : -1)).filter((i) => i >= 0);
}

export class SimOperator {
  readonly settings: OperatorSettings;
  private readonly active = new Map<string, Active>();
  private readonly hostOutcomes = new Map<string, HostOutcome>();
  private modeRules: SessionModeRule[] = [];
  private timer: NodeJS.Timeout | null = null;
  private pausedFlag = false;
  private readonly now: () => number;

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

  setDelays(d: Partial<Pick<OperatorSettings, 'pendingMs' | 'runningMs'>>): void {
    if (d.pendingMs !== undefined) this.settings.pendingMs = d.pendingMs;
    if (d.runningMs !== undefined) this.settings.runningMs = d.runningMs;
  }

  /** Outcome for a component on every layer, or on one layer index. */
  setComponentOutcome(id: string, outcome: HostOutcome, layer?: number): void {
    this.hostOutcomes.set(layer === undefined ? `c:${id}` : `c:${id}#${layer}`, outcome);
  }

  /** Outcome for every host on a configuration's layer (or on every layer). */
  setLayerOutcome(configuration: string, layer: number | undefined, outcome: HostOutcome): void {
    this.hostOutcomes.set(layer === undefined ? `l:${configuration}` : `l:${configuration}#${layer}`, outcome);
  }

  addSessionMode(rule: SessionModeRule): void {
    this.modeRules.push({ ...rule });
  }

  clearOutcomes(): void {
    this.hostOutcomes.clear();
    this.modeRules = [];
  }

  outcomeFor(host: string, configuration: string, layer: number): HostOutcome {
    return (
      this.hostOutcomes.get(`c:${host}#${layer}`) ??
      this.hostOutcomes.get(`c:${host}`) ??
      this.hostOutcomes.get(`l:${configuration}#${layer}`) ??
      this.hostOutcomes.get(`l:${configuration}`) ??
      'ok'
    );
  }

  private pickMode(s: Session): SessionMode {
    const rule = this.modeRules.find(
      (r) =>
        (r.configuration === undefined || r.configuration === s.configuration.name) &&
        (r.nameContains === undefined || s.name.includes(r.nameContains)) &&
        (r.count === undefined || r.count > 0),
    );
    if (!rule) return 'normal';
    if (rule.count !== undefined) rule.count -= 1;
    return rule.mode;
  }

  // ---- lifecycle hooks (called by the API) -------------------------------------------------------------------

  onCreated(s: Session): void {
    const mode = this.pickMode(s);
    this.active.set(s.name, { mode, stage: 'pending', enteredMs: this.now() });
    this.history.record(s, mode, this.now());
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
        this.pickUp(s);
        if (nowMs - a.enteredMs >= this.settings.pendingMs) this.toRunning(s, a, nowMs);
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
    this.finish(s, this.runLayers(s, nowMs) ? 'true' : 'false', nowMs);
  }

  private finish(s: Session, succeeded: Succeeded, nowMs: number): void {
    this.active.delete(s.name);
    s.status.session.status = 'complete';
    s.status.session.succeeded = succeeded;
    s.status.session.completion_time = localIsoSeconds(nowMs);
    this.history.update(s.name, { status: 'complete', succeeded, completed_ms: nowMs });
    log.debug('session complete', { session: s.name, succeeded });
  }

  /** Runs the selected layers in order; stops after the first layer any host fails. True when all passed. */
  private runLayers(s: Session, nowMs: number): boolean {
    const config = this.state.configurations.get(s.configuration.name);
    if (!config) return s.configuration.name.startsWith('debug_'); // configuration vanished: the clone step fails
    // DISABLE_STATE_RECORDING: debug_ configurations, passthrough, image targets.
    const record = !s.configuration.name.startsWith('debug_') && s.ansible.passthrough === '' && s.target.definition !== 'image';
    const hosts = Array.from(new Set(s.ansible.limit.split(',').filter((h) => this.state.components.has(h))));
    const defaultPlaybook = String(this.state.effectiveOptions().default_playbook ?? 'site.yml');
    for (const index of selectLayers(s.configuration.limit, config.layers)) {
      const layer = config.layers[index] as ConfigLayer;
      let layerFailed = false;
      for (const host of hosts) {
        const outcome = this.outcomeFor(host, config.name, index);
        if (outcome === 'skip') continue;
        if (outcome === 'fail' || outcome === 'incomplete') layerFailed = true;
        if (record) this.writeState(host, s.name, layer, defaultPlaybook, outcome, nowMs);
      }
      if (layerFailed) return false;
    }
    return true;
  }

  /** The callback plugin's PATCH: suffixed commit, error_count per outcome. */
  private writeState(host: string, session: string, layer: ConfigLayer, defaultPlaybook: string, outcome: HostOutcome, nowMs: number): void {
    const comp = this.state.components.get(host);
    if (!comp) return;
    const commit = layer.commit ?? '';
    const append = { clone_url: layer.clone_url ?? layer.source ?? '', playbook: layer.playbook || defaultPlaybook, session_name: session };
    const patch =
      outcome === 'fail'
        ? { state_append: { ...append, commit: `${commit}_failed` }, error_count: (comp.error_count ?? 0) + 1 }
        : outcome === 'incomplete'
          ? { state_append: { ...append, commit: `${commit}_incomplete` } }
          : { state_append: { ...append, commit }, error_count: 0 };
    this.state.putComponent(applyComponentPatch(comp, patch, nowMs));
  }
}
