/** The production phase list, in cycle order (heartbeat phase = CFS resource). */
import type { Phases } from '../context';
import { SPAN } from '../spans';
import { checkStatus } from './check-status';
import { collect } from './collect';
import { refreshOptions } from './options';
import { rebuild } from './rebuild';
import { send } from './send';

export const PHASES: Phases = {
  rebuild: { name: 'rebuild', span: SPAN.rebuildState, run: rebuild },
  cycle: [
    { name: 'options', span: SPAN.options, run: refreshOptions },
    { name: 'check_status', span: SPAN.checkSessions, run: checkStatus },
    { name: 'collect', span: SPAN.collect, run: collect, skipWhenDisabled: true },
    { name: 'send', span: SPAN.send, run: send, skipWhenDisabled: true },
  ],
};
