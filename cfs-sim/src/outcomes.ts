/**
 * What a scripted test or scenario asks the simulated operator to do: per-host/per-layer results of the Ansible
 * run and whole-session failure modes. Kept apart from the session lifecycle so the rules can be read and changed
 * without touching the timers that move sessions along.
 */
import type { Session } from './types';

/** Per-host result of one layer: ok (applied, error_count=0), fail (_failed, error_count+1), incomplete, skip (no write). */
export type HostOutcome = 'ok' | 'fail' | 'skip' | 'incomplete';
export const HOST_OUTCOMES: readonly HostOutcome[] = ['ok', 'fail', 'skip', 'incomplete'];

/**
 * Whole-session modes: clone_failure (complete/false, no writes), job_vanishes (complete/unknown, no writes),
 * stuck_pending (never leaves pending, job never set), hang_running (running forever).
 */
export type SessionMode = 'normal' | 'clone_failure' | 'job_vanishes' | 'stuck_pending' | 'hang_running';
export const SESSION_MODES: readonly SessionMode[] = [
  'normal',
  'clone_failure',
  'job_vanishes',
  'stuck_pending',
  'hang_running',
];

export interface SessionModeRule {
  mode: SessionMode;
  /** Only sessions for this configuration. */
  configuration?: string;
  nameContains?: string;
  /** Applies to this many sessions, then is used up (unset = forever). */
  count?: number;
}

/** The scripted outcomes; everything not scripted is a normal session whose hosts all succeed. */
export class OutcomeRules {
  private readonly hostOutcomes = new Map<string, HostOutcome>();
  private modeRules: SessionModeRule[] = [];

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

  clear(): void {
    this.hostOutcomes.clear();
    this.modeRules = [];
  }

  /** The most specific rule wins: a component's layer, the component, the configuration's layer, the configuration. */
  outcomeFor(host: string, configuration: string, layer: number): HostOutcome {
    return (
      this.hostOutcomes.get(`c:${host}#${layer}`) ??
      this.hostOutcomes.get(`c:${host}`) ??
      this.hostOutcomes.get(`l:${configuration}#${layer}`) ??
      this.hostOutcomes.get(`l:${configuration}`) ??
      'ok'
    );
  }

  /** The first matching rule that is not used up decides, and one of its uses is spent. */
  pickMode(s: Session): SessionMode {
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
}
