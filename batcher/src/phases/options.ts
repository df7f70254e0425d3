/**
 * Phase `options` (CFS options, every cycle): reads them, warns once per problem, and PATCHes the defaults of the
 * options CFS does not hold, never from an answer that cannot be trusted (rules/options.ts, planOptions).
 */
import { errorMessage, getLogLevel, isCfsError, setLogLevel, type CfsLogLevel } from '@cfs-batcher/shared';
import type { PhaseContext } from '../context';
import { logCfsError, logMain, logOptions } from '../log';
import { planOptions } from '../rules/options';
import { gaugeValues, setGauges } from '../state-view';

export async function refreshOptions(ctx: PhaseContext, signal?: AbortSignal): Promise<void> {
  const { state } = ctx;
  const raw = await ctx.client.getOptions({ signal });
  const parsed = planOptions(raw, state.options, state.optionsMemory);
  const current = new Set<string>();
  for (const p of parsed.problems) {
    current.add(p.message);
    if (!state.optionProblems.has(p.message)) {
      ctx.metrics.invalidRecords.inc({ kind: 'options' });
      logOptions.warn(p.message, { option: p.option });
    }
  }
  for (const message of parsed.held) {
    current.add(message);
    if (!state.optionProblems.has(message)) logOptions.warn(message);
  }
  state.optionProblems = current;
  state.options = parsed.options;
  const missing = Object.entries(parsed.patch);
  if (missing.length > 0) {
    for (const [k, v] of missing) logOptions.info(`Setting option ${k} to ${String(v)}.`);
    try {
      await ctx.client.patchOptions(parsed.patch, { signal });
    } catch (err) {
      // Not fatal: the defaults are already in force here; the PATCH is tried again next cycle.
      if (!isCfsError(err) || err.kind === 'aborted') throw err;
      logCfsError(logOptions, err);
    }
  }
  applyLogLevel(state.options.logging_level);
  setGauges(ctx.metrics, gaugeValues(state, ctx.clock.now()));
}

function applyLogLevel(want: CfsLogLevel): void {
  const have = getLogLevel();
  if (want === have) return;
  try {
    logMain.info(`Changing logging level from ${have} to ${want}`);
    setLogLevel(want);
    logMain.info(`Logging level changed from ${have} to ${want}`);
  } catch (err) {
    logMain.error(`Error updating logging level: ${errorMessage(err)}`);
  }
}
