/**
 * The heartbeat's optional fields (`creating`, `pacing`, `progress`, `completions_unwritten`; docs/CONTRACTS.md),
 * as the sidecar reads them. Their shape is the shared heartbeat schema's (a heartbeat whose fields break it is
 * refused as a whole when read); what this module adds is the reading of an absent field: an older batcher leaves
 * them out, and the sidecar treats a missing field as "unknown" (null) -- never as a failure.
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

/** `creating.reason` is quoted in verdicts and /status: a runaway line from the batcher is cut there. */
const REASON_SHOWN_MAX = 300;

export type Creating = NonNullable<Heartbeat['creating']>;
export type Pacing = NonNullable<Heartbeat['pacing']>;
export interface HeartbeatExt {
  creating: Creating | null;
  pacing: Pacing | null;
  lastCfsAnswerMs: number | null;
  /** false when the heartbeat has no `progress` block at all (the phase_stuck rule falls back to the budget alone). */
  progressKnown: boolean;
  completionsUnwritten: number | null;
}

/** Pure: the optional fields of a parsed heartbeat, each null when absent. */
export function heartbeatExt(hb: Heartbeat | null): HeartbeatExt {
  const creating = hb?.creating;
  return {
    creating: creating ? { ...creating, reason: creating.reason.slice(0, REASON_SHOWN_MAX) } : null,
    pacing: hb?.pacing ?? null,
    lastCfsAnswerMs: hb?.progress?.last_cfs_answer_ms ?? null,
    progressKnown: hb?.progress !== undefined,
    completionsUnwritten: hb?.completions_unwritten ?? null,
  };
}
