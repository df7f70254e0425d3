/**
 * The production steps, in cycle order: each names the heartbeat phase it stamps (one of HEARTBEAT_PHASES in
 * shared/src/heartbeat.ts, named after the CFS resource it works on) and the function that runs it.
 */
import type { PhaseSteps } from '../context';
import { SPAN } from '../spans';
import { checkStatus } from './check-status';
import { collect } from './collect';
import { refreshOptions } from './options';
import { rebuild } from './rebuild';
import { send } from './send';

export const PHASE_STEPS: PhaseSteps = {
  rebuild: { name: 'rebuild', span: SPAN.rebuildState, run: rebuild },
  cycle: [
    { name: 'options', span: SPAN.options, run: refreshOptions },
    { name: 'check_status', span: SPAN.checkSessions, run: checkStatus },
    { name: 'collect', span: SPAN.collect, run: collect, skipWhenDisabled: true },
    { name: 'send', span: SPAN.send, run: send, skipWhenDisabled: true },
  ],
};
