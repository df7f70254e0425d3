/**
 * The main loop's CFS port: the part of the CFS client the batcher uses, with creates, lookups and completion PATCHes
 * noted as attempts (rules/creating.ts) so the phases need not know. CFS answers are the loop's progress; the one
 * wire that notes them is createBatcher's (loop.ts), handed to the port here.
 */
import { isCfsError, type CallState, type CfsClient, type RequestInfo } from '@cfs-batcher/shared';
import { noteAttempt, type CreatingTrack } from './rules/creating';

/** The part of the CFS client the batcher uses (tests pass wrappers that lose or hide answers). */
export type CfsApi = Pick<
  CfsClient,
  | 'listComponents'
  | 'listSessions'
  | 'listAllSessions'
  | 'getSession'
  | 'createSession'
  | 'deleteSession'
  | 'getOptions'
  | 'patchOptions'
  | 'patchComponent'
>;

/**
 * Builds the port around the loop's request hook (production: a CfsClient's `onRequest`, called once per HTTP
 * attempt, retries included, so a call retrying for its whole budget still shows a loop that is getting answers),
 * and around its call hook (the client's `onCallState`: a call being retried, and its end).
 */
export type CfsPortBuilder = (onRequest: (r: RequestInfo) => void, onCallState: (c: CallState) => void) => CfsApi;

/**
 * The port with creates, lookups and PATCHes noted as attempts. `answered`, when given, is called once per call
 * that got an answer (aborted calls excepted): the wire for a ready-made port, which reports no HTTP attempts.
 */
export function trackAttempts(c: CfsApi, t: CreatingTrack, now: () => number, answered?: () => void): CfsApi {
  const answer = (err?: unknown): void => {
    if (answered !== undefined && !(isCfsError(err) && err.kind === 'aborted')) answered();
  };
  const attempt = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      const r = await call();
      noteAttempt(t, now(), what);
      answer();
      return r;
    } catch (err) {
      noteAttempt(t, now(), what, err);
      answer(err);
      throw err;
    }
  };
  const plain = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      const r = await call();
      answer();
      return r;
    } catch (err) {
      answer(err);
      throw err;
    }
  };
  async function* pages<T>(gen: AsyncIterable<T>): AsyncGenerator<T> {
    try {
      for await (const p of gen) {
        answer();
        yield p;
      }
    } catch (err) {
      answer(err);
      throw err;
    }
  }
  return {
    listComponents: (...a) => pages(c.listComponents(...a)),
    listSessions: (...a) => pages(c.listSessions(...a)),
    listAllSessions: (...a) => plain(() => c.listAllSessions(...a)),
    getSession: (...a) => attempt('GET /v3/sessions/{name}', () => c.getSession(...a)),
    createSession: (...a) => attempt('POST /v3/sessions', () => c.createSession(...a)),
    deleteSession: (...a) => plain(() => c.deleteSession(...a)),
    getOptions: (...a) => plain(() => c.getOptions(...a)),
    patchOptions: (...a) => plain(() => c.patchOptions(...a)),
    patchComponent: (...a) => attempt('PATCH /v3/components/{id}', () => c.patchComponent(...a)),
  };
}
