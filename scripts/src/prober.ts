/**
 * A kubelet-like supervisor for one container, written as a pure state machine: events in (clock ticks, probe
 * results, process exits), actions out (start, probe, SIGTERM, SIGKILL). The local pod drives it with the real clock
 * and real processes; the tests drive it with a fake clock. It follows the kubelet rules the manifest relies on
 * (as Kubernetes documents them): the startup probe gates liveness and readiness, a failed startup or liveness probe
 * kills the container, SIGKILL follows after the probe-level terminationGracePeriodSeconds, and restarts back off
 * 0 s, 10 s, 20 s ... 300 s, reset after 10 minutes of clean running.
 */

import { planRestart } from './prober-backoff';
import {
  idleTrack,
  idleTracks,
  recordResult,
  scheduleAfterStartup,
  takeDueProbes,
  type ProbeTracks,
} from './prober-track';
import { PROBE_KINDS, type ContainerProbes, type ProbeKind, type ProbeSpec } from './probe-spec';

export { BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, BACKOFF_RESET_AFTER_MS, backoffDelayMs } from './prober-backoff';

export type Phase = 'waiting' | 'running' | 'terminating' | 'stopped';

export interface KubeletState {
  phase: Phase;
  /** Increments at every start, so late probe results from a previous instance are recognised and dropped. */
  generation: number;
  restarts: number;
  /** Consecutive restarts counted for CrashLoopBackOff. */
  backoffStep: number;
  startedAtMs: number | null;
  nextStartAtMs: number | null;
  startupPassed: boolean;
  ready: boolean;
  probes: ProbeTracks;
  killAtMs: number | null;
  killSent: boolean;
  /** Set by a stop request: the container is not restarted after it exits. */
  stopping: boolean;
  lastKillReason: string | null;
}

export type KubeletEvent =
  | { type: 'tick'; nowMs: number }
  | { type: 'probe'; nowMs: number; probe: ProbeKind; generation: number; ok: boolean; detail?: string }
  | { type: 'exited'; nowMs: number; code: number | null; signal: string | null }
  | { type: 'stop'; nowMs: number };

export type KubeletAction =
  | { type: 'start'; generation: number }
  | { type: 'probe'; probe: ProbeKind; spec: ProbeSpec; generation: number }
  | { type: 'term'; reason: string; graceSeconds: number }
  | { type: 'kill'; reason: string }
  | { type: 'log'; message: string };

export function initialState(nowMs: number): KubeletState {
  return {
    phase: 'waiting',
    generation: 0,
    restarts: 0,
    backoffStep: 0,
    startedAtMs: null,
    nextStartAtMs: nowMs,
    startupPassed: false,
    ready: false,
    probes: idleTracks(),
    killAtMs: null,
    killSent: false,
    stopping: false,
    lastKillReason: null,
  };
}

function graceFor(cfg: ContainerProbes, spec: ProbeSpec | undefined): number {
  return spec?.terminationGracePeriodSeconds ?? cfg.podTerminationGracePeriodSeconds;
}

function start(s: KubeletState, cfg: ContainerProbes, nowMs: number, actions: KubeletAction[]): void {
  s.phase = 'running';
  s.generation += 1;
  s.startedAtMs = nowMs;
  s.nextStartAtMs = null;
  s.startupPassed = false;
  s.ready = false;
  s.killAtMs = null;
  s.killSent = false;
  s.probes = idleTracks();
  if (cfg.startup) {
    s.probes.startup.nextAtMs = nowMs + cfg.startup.initialDelaySeconds * 1000;
  } else {
    s.startupPassed = true;
    scheduleAfterStartup(s.probes, cfg, nowMs);
  }
  actions.push({ type: 'start', generation: s.generation });
}

function terminate(
  s: KubeletState,
  nowMs: number,
  reason: string,
  graceSeconds: number,
  actions: KubeletAction[],
): void {
  s.phase = 'terminating';
  s.killAtMs = nowMs + graceSeconds * 1000;
  s.killSent = false;
  s.lastKillReason = reason;
  s.ready = false;
  for (const kind of PROBE_KINDS) s.probes[kind].nextAtMs = null;
  actions.push({ type: 'term', reason, graceSeconds });
}

function onTick(s: KubeletState, cfg: ContainerProbes, nowMs: number, actions: KubeletAction[]): void {
  if (s.phase === 'waiting' && s.nextStartAtMs !== null && nowMs >= s.nextStartAtMs) {
    start(s, cfg, nowMs, actions);
    return;
  }
  if (s.phase === 'terminating' && !s.killSent && s.killAtMs !== null && nowMs >= s.killAtMs) {
    s.killSent = true;
    actions.push({ type: 'kill', reason: 'still running when the grace period ended' });
    return;
  }
  if (s.phase !== 'running') return;
  for (const due of takeDueProbes(s.probes, cfg, s.startupPassed, nowMs)) {
    actions.push({ type: 'probe', ...due, generation: s.generation });
  }
}

function onProbe(
  s: KubeletState,
  cfg: ContainerProbes,
  ev: Extract<KubeletEvent, { type: 'probe' }>,
  actions: KubeletAction[],
): void {
  // A result for an earlier instance, or one that lands after the kill decision, changes nothing.
  if (ev.generation !== s.generation || s.phase !== 'running') return;
  const spec = cfg[ev.probe];
  if (!spec) return;
  const track = s.probes[ev.probe];
  recordResult(track, ev.ok);
  const detail = ev.detail ? ` (${ev.detail})` : '';
  switch (ev.probe) {
    case 'startup':
      if (ev.ok) {
        s.startupPassed = true;
        track.nextAtMs = null;
        scheduleAfterStartup(s.probes, cfg, ev.nowMs);
        actions.push({ type: 'log', message: 'startup probe passed' });
      } else if (track.failures >= spec.failureThreshold) {
        terminate(s, ev.nowMs, `startup probe failed ${track.failures} times${detail}`, graceFor(cfg, spec), actions);
      }
      break;
    case 'liveness':
      if (!ev.ok) {
        actions.push({
          type: 'log',
          message: `liveness probe failed (${track.failures}/${spec.failureThreshold})${detail}`,
        });
        if (track.failures >= spec.failureThreshold) {
          terminate(
            s,
            ev.nowMs,
            `liveness probe failed ${track.failures} times${detail}`,
            graceFor(cfg, spec),
            actions,
          );
        }
      }
      break;
    case 'readiness':
      if (ev.ok && !s.ready && track.successes >= spec.successThreshold) {
        s.ready = true;
        actions.push({ type: 'log', message: 'ready' });
      } else if (!ev.ok && s.ready && track.failures >= spec.failureThreshold) {
        s.ready = false;
        actions.push({ type: 'log', message: `not ready${detail}` });
      }
      break;
  }
}

function onExited(s: KubeletState, ev: Extract<KubeletEvent, { type: 'exited' }>, actions: KubeletAction[]): void {
  if (s.phase === 'waiting' || s.phase === 'stopped') return;
  const ranMs = s.startedAtMs === null ? 0 : ev.nowMs - s.startedAtMs;
  const how = ev.signal ? `signal ${ev.signal}` : `code ${ev.code}`;
  s.startedAtMs = null;
  s.killAtMs = null;
  s.ready = false;
  s.startupPassed = false;
  for (const kind of PROBE_KINDS) s.probes[kind] = idleTrack();
  if (s.stopping) {
    s.phase = 'stopped';
    actions.push({ type: 'log', message: `exited (${how})` });
    return;
  }
  const { delayMs: delay, backoffStep } = planRestart(s.backoffStep, ranMs);
  s.backoffStep = backoffStep;
  s.restarts += 1;
  s.phase = 'waiting';
  s.nextStartAtMs = ev.nowMs + delay;
  actions.push({
    type: 'log',
    message: `exited (${how}) after ${(ranMs / 1000).toFixed(1)} s; restart #${s.restarts} in ${delay / 1000} s`,
  });
}

function onStop(s: KubeletState, cfg: ContainerProbes, nowMs: number, actions: KubeletAction[]): void {
  if (s.stopping) return;
  s.stopping = true;
  if (s.phase === 'running') {
    terminate(s, nowMs, 'stop requested', cfg.podTerminationGracePeriodSeconds, actions);
  } else if (s.phase === 'waiting') {
    s.phase = 'stopped';
    s.nextStartAtMs = null;
  }
  // terminating: the kill already under way goes on; the exit then lands in 'stopped'.
}

/** Pure transition: never mutates its input. */
export function step(
  state: KubeletState,
  cfg: ContainerProbes,
  ev: KubeletEvent,
): { state: KubeletState; actions: KubeletAction[] } {
  const s: KubeletState = structuredClone(state);
  const actions: KubeletAction[] = [];
  switch (ev.type) {
    case 'tick':
      onTick(s, cfg, ev.nowMs, actions);
      break;
    case 'probe':
      onProbe(s, cfg, ev, actions);
      break;
    case 'exited':
      onExited(s, ev, actions);
      break;
    case 'stop':
      onStop(s, cfg, ev.nowMs, actions);
      break;
  }
  return { state: s, actions };
}
