/** Options: PATCH merges and answers 200 with the whole dict; default_playbook is read-only in v3. */
import { ProblemError } from './problem';
import { optionsInput, parseBody } from './schemas';
import type { SimState } from './state';
import type { Options } from './types';

export function getOptions(state: SimState): Options {
  return state.effectiveOptions();
}

export function patchOptions(state: SimState, body: unknown): Options {
  if (body !== null && typeof body === 'object' && 'default_playbook' in body) {
    throw ProblemError.badRequest('default_playbook is read-only in the v3 API');
  }
  const patch = parseBody(optionsInput, body);
  state.options = { ...state.options, ...patch };
  return state.effectiveOptions();
}
