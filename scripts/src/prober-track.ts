/**
 * The prober's bookkeeping for each probe of one container instance: when it runs next, whether a result is still
 * awaited, and the streaks of consecutive results its thresholds count.
 */

import { PROBE_KINDS, type ContainerProbes, type ProbeKind, type ProbeSpec } from './probe-spec';

export interface ProbeTrack {
  nextAtMs: number | null;
  inFlight: boolean;
  failures: number;
  successes: number;
}

export type ProbeTracks = Record<ProbeKind, ProbeTrack>;

export function idleTrack(): ProbeTrack {
  return { nextAtMs: null, inFlight: false, failures: 0, successes: 0 };
}

export function idleTracks(): ProbeTracks {
  return { startup: idleTrack(), liveness: idleTrack(), readiness: idleTrack() };
}

/** Probes scheduled once the startup gate is open (or right away when there is no startup probe). */
export function scheduleAfterStartup(tracks: ProbeTracks, cfg: ContainerProbes, nowMs: number): void {
  for (const kind of ['liveness', 'readiness'] as const) {
    const spec = cfg[kind];
    tracks[kind] = idleTrack();
    if (spec) tracks[kind].nextAtMs = nowMs + spec.initialDelaySeconds * 1000;
  }
}

/**
 * The probes due at `nowMs`, in PROBE_KINDS order: the startup probe until it passes, the others only after. Each is
 * marked in flight and its next run set one period on.
 */
export function takeDueProbes(
  tracks: ProbeTracks,
  cfg: ContainerProbes,
  startupPassed: boolean,
  nowMs: number,
): { probe: ProbeKind; spec: ProbeSpec }[] {
  const due: { probe: ProbeKind; spec: ProbeSpec }[] = [];
  for (const kind of PROBE_KINDS) {
    const spec = cfg[kind];
    const track = tracks[kind];
    if (!spec || track.inFlight || track.nextAtMs === null || nowMs < track.nextAtMs) continue;
    if (kind === 'startup' && startupPassed) continue;
    if (kind !== 'startup' && !startupPassed) continue;
    track.inFlight = true;
    // Like the kubelet's ticker: the next probe is one period after this one started, whatever it takes.
    track.nextAtMs = nowMs + spec.periodSeconds * 1000;
    due.push({ probe: kind, spec });
  }
  return due;
}

/** A result ends one streak and extends the other: the thresholds count consecutive results only. */
export function recordResult(track: ProbeTrack, ok: boolean): void {
  track.inFlight = false;
  if (ok) {
    track.failures = 0;
    track.successes += 1;
  } else {
    track.successes = 0;
    track.failures += 1;
  }
}
