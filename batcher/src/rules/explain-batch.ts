/**
 * Explain answers for a component the book holds (pure): queued in an open batch, held by something, in an
 * uncertain create, or in a session. Holds are checked most binding first, as the heartbeat's `creating` line orders
 * them (state-view.ts creatingView), so the one fact in the sentence is the one that ends last.
 */
import { type Batch } from './batch';
import {
  answer,
  globalHold,
  heldAnswer,
  nextSend,
  type ExplainClock,
  type ExplainSource,
  type Explanation,
  type Hold,
} from './explain-answer';
import { clockAt, isoAt, layerNamesOf, layersText, plural, whenAt } from './explain-text';
import { allowanceReason, pendingAllowed } from './pacing';

function batchDetails(b: Batch, s: ExplainSource, c: ExplainClock): Record<string, unknown> {
  return {
    configuration: b.configName,
    layers: b.configLimit,
    layer_names: layerNamesOf(b.configLimit, c.layerNames?.(b.configName)),
    members: b.members.size,
    batch_size: s.options.batch_size,
    batch_window_s: s.options.batch_window,
    opened_at: isoAt(b.windowStart, c.offset),
  };
}

const batchName = (b: Batch, c: ExplainClock): string =>
  `${b.configName} ${layersText(b.configLimit, c.layerNames?.(b.configName))}`;

export function queued(s: ExplainSource, id: string, b: Batch, c: ExplainClock): Explanation {
  const windowEnd = b.windowStart + s.options.batch_window * 1000;
  const full = b.members.size >= s.options.batch_size;
  const global = globalHold(s, c);
  const batch = batchDetails(b, s, c);
  if (!full && c.now <= windowEnd) {
    // The window ends first unless a hold outlasts it.
    if (global !== null && (global.until === null || global.until > windowEnd))
      return heldAnswer(id, global, c, { batch });
    const count = `${b.members.size} of ${s.options.batch_size}`;
    // The window is the wait now; a hold on ready batches (pacing, CFS trouble) is the wait that follows it.
    const then = readyHold(s, b, c, null);
    const after = then.why === 'next_send' ? '' : ` Ready batches are held at the moment: ${then.text}.`;
    return answer(
      id,
      'waiting_for_batch',
      `Waiting for batch ${batchName(b, c)}, ${count} members; it is sent at ${whenAt(windowEnd, c.now, c.offset)} when the ${s.options.batch_window} s window ends, or sooner if it fills.${after}`,
      'batcher',
      c,
      {
        batch: { ...batch, window_ends_at: isoAt(windowEnd, c.offset), sent_when: 'window_end_or_full' },
        ...(after ? { then_held: { why: then.why, text: then.text } } : {}),
      },
    );
  }
  return heldAnswer(id, readyHold(s, b, c, global), c, { batch });
}

/** Why a batch that is full or past its window is not sent yet. */
function readyHold(s: ExplainSource, b: Batch, c: ExplainClock, global: Hold | null): Hold {
  if (global !== null) return global;
  const trouble = s.creating.trouble.create;
  if (b.nextAttemptAt > c.now) {
    const failures = plural(b.createFailures, 'failed create');
    if (trouble !== null)
      return {
        why: trouble.state,
        text: `CFS is ${trouble.state === 'cfs_refusing' ? 'refusing' : 'not answering'} session creates (${trouble.what}, ${plural(trouble.count, 'time')} since ${clockAt(trouble.since, c.offset)}); this batch waits after ${failures}`,
        until: b.nextAttemptAt,
        create_failures: b.createFailures,
        cfs: trouble.what,
      };
    return {
      why: 'create_retry',
      text: `CFS refused this batch's session create (${failures}); it waits its retry delay`,
      until: b.nextAttemptAt,
      create_failures: b.createFailures,
    };
  }
  const failing = failingCycles(s, c);
  if (failing !== null) return failing;
  const paced = s.pacing.limited;
  if (paced !== null)
    return {
      why: 'pacing',
      text:
        paced.why === 'pending_cap'
          ? `${paced.reason}: the batcher waits for the operator to start some of them`
          : paced.reason,
      until: paced.until ?? nextSend(s, c),
      pacing: {
        limit: paced.why,
        pending_sessions: s.pacing.pendingSessions,
        pending_cap: s.pacingCaps.pendingSessionsCap > 0 ? pendingAllowed(s.pacing, s.pacingCaps) : 0,
        allowance_why: s.pacing.allowance.why,
        allowance_reason: allowanceReason(s.pacing, s.pacingCaps),
        pending_ceiling: s.pacingCaps.pendingSessionsCap,
        creates_per_minute_cap: s.pacingCaps.createsPerMinuteCap,
      },
    };
  if (trouble !== null)
    return {
      why: trouble.state,
      text: `CFS ${trouble.state === 'cfs_refusing' ? 'refused' : 'did not answer'} the last session create (${trouble.what}, ${plural(trouble.count, 'time')})`,
      until: nextSend(s, c),
      cfs: trouble.what,
    };
  return {
    why: 'next_send',
    text: `the batch is ${b.members.size >= s.options.batch_size ? 'full' : 'past its window'} and goes out in the next send phase`,
    until: nextSend(s, c),
  };
}

/** The last cycle failed on CFS and none has succeeded since: no send phase is reached until CFS answers. */
function failingCycles(s: ExplainSource, c: ExplainClock): Hold | null {
  const err = s.cfsLastError;
  if (s.lastCycle?.outcome !== 'error' || err === null) return null;
  if (s.cfsLastSuccess !== null && s.cfsLastSuccess > err.at_ms) return null;
  const good = s.cfsLastSuccess === null ? 'the batcher started' : clockAt(s.cfsLastSuccess, c.offset);
  return {
    why: err.kind === 'http' || err.kind === 'invalid-response' ? 'cfs_refusing' : 'cfs_timeout',
    text: `the batcher's cycles fail on CFS (${err.message}, at ${clockAt(err.at_ms, c.offset)}; no cycle has succeeded since ${good}), so nothing is sent until CFS answers`,
    until: nextSend(s, c),
    cfs: err.message,
  };
}

export function uncertain(s: ExplainSource, id: string, b: Batch, c: ExplainClock): Explanation {
  const name = b.uncertainName!;
  const next = Math.max(nextSend(s, c), Math.min(b.nextAttemptAt, b.horizonAt));
  const text = b.knownToExist
    ? `CFS says session ${name} exists but its members cannot be read yet; the batcher tracks it with all ${plural(b.members.size, 'component')} by ${clockAt(b.horizonAt, c.offset)} at the latest`
    : `the create of session ${name} (${plural(b.members.size, 'component')}) got no clear answer from CFS; the batcher looks it up every cycle and gives the name up at ${clockAt(b.horizonAt, c.offset)} if CFS never shows it`;
  return heldAnswer(
    id,
    { why: 'uncertain_create', text, until: next, session_name: name, horizon_at: isoAt(b.horizonAt, c.offset) },
    c,
    { batch: batchDetails(b, s, c) },
  );
}

export function inSession(s: ExplainSource, id: string, b: Batch, c: ExplainClock): Explanation {
  const name = b.sessionName!;
  const created = b.sessionStart ?? b.windowStart;
  const session = {
    name,
    status: b.sessionStatus,
    status_seen_at: b.sessionStatus === null ? null : isoAt(b.sessionStatusAt, c.offset),
    created_at: isoAt(created, c.offset),
    members: b.members.size,
    rebuilt: b.rebuilt,
  };
  const done = s.completions.get(b.id);
  if (done !== undefined) {
    const left = new Set(done.patches.map((p) => p.id)).size;
    return answer(
      id,
      'in_session',
      `Session ${name} ended (${done.result}); its completion writes to CFS (${left} left) are retried in the next cycle, at ${whenAt(nextSend(s, c), c.now, c.offset)}, and the component is free once they are written.`,
      'batcher',
      c,
      { session, completion: { result: done.result, writes_left: left } },
    );
  }
  const members = plural(b.members.size, 'component');
  const seen =
    b.sessionStatus === null
      ? 'not checked in CFS yet'
      : `${b.sessionStatus} in CFS at ${clockAt(b.sessionStatusAt, c.offset)}`;
  let tail = 'the batcher records the result when it ends';
  if (b.sessionStatus === 'pending') {
    const limit = s.options.batcher_pending_timeout;
    tail = `the batcher deletes it if it is still pending at ${whenAt(created + limit * 1000, c.now, c.offset)} (batcher_pending_timeout ${limit} s)`;
  }
  return answer(
    id,
    'in_session',
    `In session ${name} (${members}), ${seen}, created ${clockAt(created, c.offset)}; ${tail}.`,
    'batcher',
    c,
    { session },
  );
}
