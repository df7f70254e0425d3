/** The startupProbe gate (`/startupz`): a pure function of the verdict, the history and the clock. */
import type { Thresholds } from './config';
import type { History, Now } from './history';
import { secs, type Verdict } from './verdict';

export interface StartupVerdict {
  ready: boolean;
  message: string;
}

/** How recently the sequence must have advanced for /startupz: a few beats (the batcher beats once a second). */
export const STARTUP_ADVANCE_MS = 3000;

/**
 * Pure: the startupProbe gate. Open once the sidecar has seen the current instance's sequence advance, and recently:
 * a live loop, proven. The kubelet stops asking once it succeeds, so the batcher's age, its grace or the progress
 * rule do not enter; a file left by a previous instance never advances, and one that stopped a moment ago (a crash)
 * closes the gate within a few seconds.
 */
export function evaluateStartup(v: Verdict, h: History, now: Now, _t?: Thresholds): StartupVerdict {
  const hb = h.lastGood;
  const cur = h.current;
  if (!hb || !cur) return { ready: false, message: 'no heartbeat from the batcher yet' };
  const startedAgo = secs(Math.max(0, now.wallMs - hb.started_at_ms));
  const who = `instance ${hb.instance_id} (started ${startedAgo} ago)`;
  if (!cur.proven) {
    return {
      ready: false,
      message: `${who}: its heartbeat (sequence ${hb.sequence}) has not advanced since the sidecar first read it ${secs(now.monoMs - cur.firstSeenMono)} ago; waiting for a live loop`,
    };
  }
  const age = v.details.heartbeatAgeMs ?? now.monoMs - cur.advancedAtMono;
  const limit = Math.min(STARTUP_ADVANCE_MS, v.details.freshnessLimitMs);
  if (age > limit) {
    return {
      ready: false,
      message: `${who}: its heartbeat last advanced ${secs(age)} ago (the gate wants ${secs(limit)}); ${v.message}`,
    };
  }
  return {
    ready: true,
    message: `${who} is alive: heartbeat sequence ${hb.sequence} advanced ${secs(age)} ago`,
  };
}
