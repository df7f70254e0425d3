/**
 * Explain answers for an id the batcher's memory does not hold, from CFS's record of it (pure): CFS has no such
 * component, it is disabled, it is not pending (configured, unconfigured), CFS stopped retrying it, or it is
 * pending and the next collect files it (or skips it, for the reason collect would give).
 */
import type { CfsComponent } from '@cfs-batcher/shared';
import { idProblem, toBatchComponent } from './component';
import {
  answer,
  globalHold,
  heldAnswer,
  nextSend,
  notBatchedRecord,
  type ExplainClock,
  type ExplainSource,
  type Explanation,
} from './explain-answer';
import { isoAt, layerNamesOf, layerText, layersText, whenAt } from './explain-text';
import { lastSessionOf, retryCommand, skippedText } from './explain-failure';
import { SESSION_PREFIX } from './session-status';

/** The retry policy CFS applies to this component (its own, else the option; -1 = unlimited). */
export function retryPolicyOf(
  raw: CfsComponent,
  s: Pick<ExplainSource, 'options'>,
): { retries: number; from: 'component' | 'default_batcher_retry_policy' } {
  if (typeof raw.retry_policy === 'number') return { retries: raw.retry_policy, from: 'component' };
  return { retries: s.options.default_batcher_retry_policy, from: 'default_batcher_retry_policy' };
}

/** The latest state entry a batcher session wrote, or null. */
export function lastBatcherSession(raw: CfsComponent): { name: string; status: string; at: string } | null {
  const state = Array.isArray(raw.state) ? raw.state : [];
  for (let i = state.length - 1; i >= 0; i--) {
    const e = state[i] as { session_name?: unknown; status?: unknown; last_updated?: unknown } | undefined;
    if (typeof e?.session_name === 'string' && e.session_name.startsWith(SESSION_PREFIX))
      return {
        name: e.session_name,
        status: typeof e.status === 'string' ? e.status : '',
        at: typeof e.last_updated === 'string' ? e.last_updated : '',
      };
  }
  return null;
}

/** CFS has no component of that id. */
export function explainMissing(id: string, c: ExplainClock): Explanation {
  return answer(
    id,
    'unknown',
    'Unknown: CFS has no component with this id; check the id, or whether the hardware sync has added it to CFS yet.',
    'cfs',
    c,
  );
}

/** What CFS's record says, for an id the batcher's memory does not hold. */
export function explainFromCfs(s: ExplainSource, id: string, raw: CfsComponent, c: ExplainClock): Explanation {
  const status = typeof raw.configuration_status === 'string' ? raw.configuration_status.toLowerCase() : '';
  const errorCount = typeof raw.error_count === 'number' ? raw.error_count : 0;
  const cfs = { status, enabled: raw.enabled === true, error_count: errorCount, desired_config: raw.desired_config };
  if (raw.enabled !== true)
    return answer(
      id,
      'not_batched',
      `Not batched: the component is disabled in CFS (enabled=false), and the batcher only configures enabled components; enable it to have it configured.`,
      'cfs',
      c,
      { why: 'disabled', cfs },
    );
  const policy = retryPolicyOf(raw, s);
  const names = typeof raw.desired_config === 'string' ? c.layerNames?.(raw.desired_config) : undefined;
  if (status === 'failed' && policy.retries !== -1 && errorCount >= policy.retries) {
    const last = lastSessionOf(raw, names);
    const retry = retryCommand(id, c.cfsBaseUrl);
    const ran =
      last === null
        ? 'CFS records no session that ran it'
        : `its last session, ${last.name}, ${last.status === 'failed' ? 'failed' : `left ${last.status || 'no status'} on`} ${last.layer === null ? 'a layer not in its configuration' : layerText(last.layer.index, names)} of ${String(raw.desired_config)} at ${last.at || 'an unrecorded time'}`;
    return answer(
      id,
      'not_batched',
      `Not batched: CFS stopped retrying it after ${errorCount} failed attempts (error_count ${errorCount} reached the retry limit ${policy.retries} from ${policy.from === 'component' ? "the component's retry_policy" : 'the default_batcher_retry_policy option'}); ${ran}. Find the failure in ${last === null ? 'the CFS logs' : `that session's logs (cray cfs v3 sessions describe ${last.name})`}, fix it, then retry with: ${retry.cli} (without the CLI: ${retry.patch.method} ${retry.patch.url} ${JSON.stringify(retry.patch.body)}).`,
      'cfs',
      c,
      {
        why: 'retry_limit',
        error_count: errorCount,
        retry_policy: policy.retries,
        retry_policy_from: policy.from,
        last_session: last,
        retry,
        cfs,
      },
    );
  }
  if (status !== 'pending') {
    const last = lastBatcherSession(raw);
    const lastText = last === null ? '' : `; its last batcher session was ${last.name} (${last.status || 'no status'})`;
    const skipped = last?.status === 'skipped' ? ` ${skippedText(last.name)}` : '';
    return answer(
      id,
      'not_pending',
      `Not pending: CFS reports it ${status || 'without a status'}, so there is nothing for the batcher to do${lastText}.${skipped}`,
      'cfs',
      c,
      { cfs, last_session: last },
    );
  }
  const hold = globalHold(s, c);
  if (hold?.why === 'batcher_disable') return heldAnswer(id, hold, c, { cfs }, 'cfs');
  const bad = idProblem(id);
  if (bad !== null) return notBatchedRecord(id, bad, 'cfs', c);
  const r = toBatchComponent(raw, true);
  if (!r.ok) return notBatchedRecord(id, r.reason, 'cfs', c);
  const next = nextSend(s, c);
  const configNames = c.layerNames?.(r.component.configName);
  const key = `${r.component.configName} ${layersText(r.component.configLimit, configNames)}`;
  const at = whenAt(next, c.now, c.offset);
  // Before the rebuild nothing is collected, and the node may be in a session of the previous instance.
  const reason = s.rebuilt
    ? `Waiting for batch ${key}: CFS lists it pending but the batcher has not collected it yet; the next collect, at ${at}, files it in a batch.`
    : `Waiting for batch ${key}: CFS lists it pending, but the batcher has not rebuilt its state from CFS's sessions since it started (it may be in a session of the previous instance) and collects nothing until it has; the next attempt is at ${at}.`;
  return answer(id, 'waiting_for_batch', reason, 'cfs', c, {
    batch: {
      configuration: r.component.configName,
      layers: r.component.configLimit,
      layer_names: layerNamesOf(r.component.configLimit, configNames),
      members: null,
      batch_size: s.options.batch_size,
      batch_window_s: s.options.batch_window,
      collected: false,
      rebuilding: !s.rebuilt,
      next_collect_at: isoAt(next, c.offset),
    },
    cfs,
  });
}
