/**
 * An answer that waits on the loop, while the loop is retrying a failing CFS call (pure): the call, its last answer,
 * since when and until when it keeps trying, so "the next collect, at ... (now)" is not all an operator reads while
 * nothing can move.
 */
import type { ExplainClock, ExplainSource, ExplainState, Explanation } from './explain-answer';
import { clockAt, isoAt, plural } from './explain-text';
import { answerText, longestRetrying } from './retrying-calls';

/** Answers whose next step needs the loop's CFS calls to get through. */
const WAITS_ON_THE_LOOP: ReadonlySet<ExplainState> = new Set(['waiting_for_batch', 'held', 'in_session']);

/** The sentence about the call failing longest, or null when none is retrying. */
export function retryingSentence(s: Pick<ExplainSource, 'cfsRetrying'>, c: ExplainClock): string | null {
  const r = longestRetrying(s.cfsRetrying);
  if (r === null) return null;
  return `Meanwhile the batcher is retrying ${r.method} ${r.route}: ${answerText(r.answer)}, failing since ${clockAt(r.since, c.offset)} (${plural(r.attempts, 'failed attempt')}); it keeps trying until ${clockAt(r.until, c.offset)} at the latest, and the loop moves on only when CFS answers it.`;
}

export function withRetryingCall(a: Explanation, s: Pick<ExplainSource, 'cfsRetrying'>, c: ExplainClock): Explanation {
  const r = longestRetrying(s.cfsRetrying);
  const sentence = retryingSentence(s, c);
  if (r === null || sentence === null || !WAITS_ON_THE_LOOP.has(a.state)) return a;
  return {
    ...a,
    reason: `${a.reason} ${sentence}`,
    cfs_retrying: {
      method: r.method,
      route: r.route,
      answer: r.answer,
      attempts: r.attempts,
      since: isoAt(r.since, c.offset),
      until: isoAt(r.until, c.offset),
    },
  };
}
