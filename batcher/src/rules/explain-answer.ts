/**
 * The shape of an explain answer and the pieces every answer shares (pure): the states and reasons the contract
 * names (docs/CONTRACTS.md, "Explain"), the holds that stop every create, and the sentence of a hold.
 */
import type { BatcherState } from '../state';
import { RECENT_SESSIONS_SIZE, backoffUntil, isBackingOff } from './backoff';
import { idProblem } from './component';
import { foreignSummary, yieldText } from './foreign';
import { isoAt, whenAt } from './explain-text';

/** The states an answer can be in (docs/CONTRACTS.md, "Explain"). */
export const EXPLAIN_STATES = [
  'waiting_for_batch',
  'in_session',
  'held',
  'not_batched',
  'not_pending',
  'unknown',
] as const;
export type ExplainState = (typeof EXPLAIN_STATES)[number];

/** Why a ready batch is not sent (`hold.why` of a `held` answer). */
export const HOLD_REASONS = [
  'batcher_disable',
  'intents_unreadable',
  'backoff',
  'cfs_refusing',
  'cfs_timeout',
  'create_retry',
  'pacing',
  'uncertain_create',
  'next_send',
  'foreign_batcher',
  'foreign_session',
] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/** Why CFS's pending component is not batched (`why` of a `not_batched` answer). */
export const NOT_BATCHED_REASONS = ['invalid_record', 'bad_id', 'disabled', 'retry_limit'] as const;
export type NotBatchedReason = (typeof NOT_BATCHED_REASONS)[number];

export interface Explanation {
  id: string;
  state: ExplainState;
  reason: string;
  /** Where the answer comes from: the batcher's memory, or CFS's record of the component. */
  source: 'batcher' | 'cfs';
  at: string;
  [detail: string]: unknown;
}

/** What an answer reads of the state (a subset, so tests and the bench can build it). */
export type ExplainSource = Pick<
  BatcherState,
  | 'options'
  | 'backoff'
  | 'book'
  | 'rejectedComponents'
  | 'creating'
  | 'pacing'
  | 'pacingCaps'
  | 'completions'
  | 'nextCycleAt'
  | 'rebuilt'
  | 'lastCycle'
  | 'cfsLastError'
  | 'cfsLastSuccess'
  | 'cfsRetrying'
  | 'foreign'
> & { readonly intents: { readonly heldUntil: number } };

/** The wall-clock frame of one answer: `now` on the monotonic timeline, `offset` = wall - monotonic. */
export interface ExplainClock {
  now: number;
  offset: number;
  /** The layer names of a configuration, when the explainer has read it from CFS (explain-service.ts). */
  layerNames?: (configuration: string) => readonly string[] | undefined;
  /** The batcher's CFS base URL, for the request an answer tells the operator to make. */
  cfsBaseUrl?: string;
}

export interface Hold {
  why: HoldReason;
  /** The sentence's cause, without the time. */
  text: string;
  /** When the next attempt is (monotonic), null when only an operator or CFS can end it. */
  until: number | null;
  [detail: string]: unknown;
}

export function answer(
  id: string,
  state: ExplainState,
  reason: string,
  source: Explanation['source'],
  c: ExplainClock,
  details: Record<string, unknown> = {},
): Explanation {
  return { id, state, reason, source, at: isoAt(c.now, c.offset), ...details };
}

/** The next send phase: the end of the sleep in progress, or now while a cycle runs. */
export function nextSend(s: ExplainSource, c: ExplainClock): number {
  return s.nextCycleAt !== null && s.nextCycleAt > c.now ? s.nextCycleAt : c.now;
}

/** Holds on every create, whatever the batch: the operator's switch, a hold after restart, the backoff. */
export function globalHold(s: ExplainSource, c: ExplainClock): Hold | null {
  if (s.options.batcher_disable)
    return {
      why: 'batcher_disable',
      text: 'batcher_disable is true in the CFS options, so no session is created until it is set back to false',
      until: null,
    };
  if (s.intents.heldUntil > c.now)
    return {
      why: 'intents_unreadable',
      text: 'the create-intents file was unusable at start-up, so creates are held back (a create in flight before the restart must not be duplicated)',
      until: s.intents.heldUntil,
    };
  const down = s.foreign.standingDown;
  if (down !== null)
    return {
      why: 'foreign_batcher',
      text: `another batcher is creating sessions in this CFS (${foreignSummary(s.foreign)}), so this one stands down (${yieldText(down.why)}) until none has appeared for a while`,
      until: null,
      foreign_sessions: [...s.foreign.recent],
    };
  if (isBackingOff(s.backoff, c.now))
    return {
      why: 'backoff',
      text: `the ${RECENT_SESSIONS_SIZE} most recent sessions failed, so session creation is halted for ${s.backoff.currentS} s`,
      until: backoffUntil(s.backoff, c.now),
      backoff_s: s.backoff.currentS,
    };
  return null;
}

export function holdSentence(h: Hold, c: ExplainClock): string {
  const end = h.until === null ? '' : `; the next attempt is at ${whenAt(h.until, c.now, c.offset)}`;
  return `Held: ${h.text}${end}.`;
}

export function heldAnswer(
  id: string,
  h: Hold,
  c: ExplainClock,
  extra: Record<string, unknown> = {},
  source: Explanation['source'] = 'batcher',
): Explanation {
  const { text: _text, until, ...rest } = h;
  return answer(id, 'held', holdSentence(h, c), source, c, {
    hold: { ...rest, next_attempt_at: until === null ? null : isoAt(until, c.offset) },
    ...extra,
  });
}

/** A record collect skipped (or would skip): an id no Ansible limit can carry, or a record missing what is needed. */
export function notBatchedRecord(
  id: string,
  problem: string,
  source: Explanation['source'],
  c: ExplainClock,
): Explanation {
  if (idProblem(id) !== null)
    return answer(
      id,
      'not_batched',
      `Not batched: the ${problem}, so no session can target it; rename the component in CFS.`,
      source,
      c,
      { why: 'bad_id', problem },
    );
  return answer(
    id,
    'not_batched',
    `Not batched: its CFS record is unusable (${problem}); fix the record or its configuration in CFS and the next collect files it.`,
    source,
    c,
    { why: 'invalid_record', problem },
  );
}
