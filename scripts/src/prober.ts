/**
 * A kubelet-like supervisor for one container, written as a pure state machine: events in (clock ticks, probe
 * results, process exits), actions out (start, probe, SIGTERM, SIGKILL). The local pod drives it with the real clock
 * and real processes; the tests drive it with a fake clock. It follows the kubelet rules the manifest relies on
 * (as Kubernetes documents them): the startup probe gates liveness and readiness, a failed startup or liveness probe
 * kills the container, SIGKILL follows after the probe-level terminationGracePeriodSeconds, and restarts back off
 * 0 s, 10 s, 20 s ... 300 s, reset after 10 minutes of clean running.
 */

import { PROBE_KINDS, type ContainerProbes, type ProbeKind, type ProbeSpec } from './probe-spec';

export const BACKOFF_INITIAL_MS = 10_000;
export const BACKOFF_MAX_MS = 300_000;
/** A container that ran this long without trouble starts its backoff over. */
export const BACKOFF_RESET_AFTER_MS = 600_000;

export type Phase = 'waiting' | 'running' | 'terminating' | 'stopped';

interface ProbeTrack {
  nextAtMs: number | null;
  inFlight: boolean;
  failures: number;
  successes: number;
}

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
  probes: Record<ProbeKind, ProbeTrack>;
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

function idleTrack(): ProbeTrack {
  return { nextAtMs: null, inFlight: false, failures: 0, successes: 0 };
}

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
    probes: { startup: idleTrack(), liveness: idleTrack(), readiness: idleTrack() },
    killAtMs: null,
    killSent: false,
    stopping: false,
    lastKillReason: null,
  };
}

/** CrashLoopBackOff delay before the restart that follows `step` earlier consecutive restarts. */
export function backoffDelayMs(step: number): number {
  if (step <= 0) return 0;
  return Math.min(BACKOFF_INITIAL_MS * 2 ** (step - 1), BACKOFF_MAX_MS);
}

function graceFor(cfg: ContainerProbes, spec: ProbeSpec | undefined): number {
  return spec?.terminationGracePeriodSeconds ?? cfg.podTerminationGracePeriodSeconds;
}

/** Probes scheduled once the startup gate is open (or right away when there is no startup probe). */
function scheduleAfterStartup(s: KubeletState, cfg: ContainerProbes, nowMs: number): void {
  for (const kind of ['liveness', 'readiness'] as const) {
    const spec = cfg[kind];
    s.probes[kind] = idleTrack();
    if (spec) s.probes[kind].nextAtMs = nowMs + spec.initialDelaySeconds * 1000;
  }
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
  s.probes = { startup: idleTrack(), liveness: idleTrack(), readiness: idleTrack() };
  if (cfg.startup) {
    s.probes.startup.nextAtMs = nowMs + cfg.startup.initialDelaySeconds * 1000;
  } else {
    s.startupPassed = true;
    scheduleAfterStartup(s, cfg, nowMs);
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
  for (const kind of PROBE_KINDS) {
    const spec = cfg[kind];
    const track = s.probes[kind];
    if (!spec || track.inFlight || track.nextAtMs === null || nowMs < track.nextAtMs) continue;
    if (kind === 'startup' && s.startupPassed) continue;
    if (kind !== 'startup' && !s.startupPassed) continue;
    track.inFlight = true;
    // Like the kubelet's ticker: the next probe is one period after this one started, whatever it takes.
    track.nextAtMs = nowMs + spec.periodSeconds * 1000;
    actions.push({ type: 'probe', probe: kind, spec, generation: s.generation });
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
  track.inFlight = false;
  if (ev.ok) {
    track.failures = 0;
    track.successes += 1;
  } else {
    track.successes = 0;
    track.failures += 1;
  }
  const detail = ev.detail ? ` (${ev.detail})` : '';
  switch (ev.probe) {
    case 'startup':
      if (ev.ok) {
        s.startupPassed = true;
        track.nextAtMs = null;
        scheduleAfterStartup(s, cfg, ev.nowMs);
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
  if (ranMs >= BACKOFF_RESET_AFTER_MS) s.backoffStep = 0;
  const delay = backoffDelayMs(s.backoffStep);
  s.backoffStep += 1;
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
