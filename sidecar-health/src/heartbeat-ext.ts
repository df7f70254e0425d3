/**
 * The heartbeat's optional r2 fields (`creating`, `pacing`, `progress`, `completions_unwritten`; docs/CONTRACTS.md).
 * The states are the shared schema's; the reading stays defensive: an older batcher leaves the fields out, and the
 * sidecar treats a missing field as "unknown" -- never as a failure.
 */
import { CREATING_STATES, type CreatingState, type Heartbeat } from '@cfs-batcher/shared';

export { CREATING_STATES, type CreatingState };
/** States in which "no session created" is CFS's trouble (or a deliberate hold), not a stalled loop. */
export const TROUBLE_STATES: ReadonlySet<CreatingState> = new Set<CreatingState>([
  'cfs_refusing',
  'cfs_timeout',
  'uncertain',
  'backoff',
  'paced',
  'disabled',
]);

export interface Creating {
  state: CreatingState;
  reason: string;
  next_attempt_ms: number | null;
  last_attempt_ms: number | null;
  cfs_trouble_since_ms: number | null;
}
export interface Pacing {
  pending_sessions: number;
  pending_cap: number;
  creates_per_minute_cap: number;
}
export interface HeartbeatExt {
  creating: Creating | null;
  pacing: Pacing | null;
  lastCfsAnswerMs: number | null;
  /** false when the heartbeat has no `progress` block at all (the phase_stuck rule falls back to the budget alone). */
  progressKnown: boolean;
  completionsUnwritten: number | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
const epochOrNull = (v: unknown): number | null => count(v);

function creatingOf(v: unknown): Creating | null {
  if (!isObj(v) || !(CREATING_STATES as readonly unknown[]).includes(v.state)) return null;
  return {
    state: v.state as CreatingState,
    reason: typeof v.reason === 'string' ? v.reason.slice(0, 300) : '',
    next_attempt_ms: epochOrNull(v.next_attempt_ms),
    last_attempt_ms: epochOrNull(v.last_attempt_ms),
    cfs_trouble_since_ms: epochOrNull(v.cfs_trouble_since_ms),
  };
}

function pacingOf(v: unknown): Pacing | null {
  if (!isObj(v)) return null;
  const [a, b, c] = [count(v.pending_sessions), count(v.pending_cap), count(v.creates_per_minute_cap)];
  return a === null || b === null || c === null
    ? null
    : { pending_sessions: a, pending_cap: b, creates_per_minute_cap: c };
}

/** Pure: the optional fields of a parsed heartbeat, each null when absent or malformed. */
export function heartbeatExt(hb: Heartbeat | null): HeartbeatExt {
  const o: Obj = isObj(hb) ? hb : {};
  const progress = isObj(o.progress) ? o.progress : null;
  return {
    creating: creatingOf(o.creating),
    pacing: pacingOf(o.pacing),
    lastCfsAnswerMs: progress ? epochOrNull(progress.last_cfs_answer_ms) : null,
    progressKnown: progress !== null,
    completionsUnwritten: count(o.completions_unwritten),
  };
}
