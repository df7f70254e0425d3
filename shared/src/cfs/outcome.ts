/**
 * What the end of one attempt means: axios's answer or error, read with the attempt's own record (did the socket
 * connect, did this process end the attempt), mapped onto the one CfsError a CFS call can fail with; and the rule for
 * whether to try again. Pure: no I/O.
 */
import { AxiosError, isAxiosError, isCancel } from 'axios';
import { CONNECT_TIMEOUT_CODE, type AttemptRecord } from './attempt';
import { CfsError } from './errors';

/** What a message names: the method, the URL without its query, the route template. */
export interface CallTarget {
  method: string;
  url: string;
  route: string;
}

/** Errors raised while connecting: the request never left this process, so even a POST may be repeated. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  CONNECT_TIMEOUT_CODE,
]);

function isIdempotent(method: string): boolean {
  return method === 'GET' || method === 'DELETE' || method === 'HEAD' || method === 'PUT';
}

/** Whether to try again after `error`: never after the caller's abort or past the budget; a POST/PATCH only when
 * it certainly never left; a read also after a timeout, a reset, a cut or oversized body, or a 5xx. */
export function shouldRetry(
  method: string,
  error: CfsError,
  elapsedMs: number,
  budgetMs: number,
  callerAborted: boolean,
): boolean {
  if (callerAborted || error.kind === 'aborted') return false;
  if (elapsedMs >= budgetMs) return false; // budget spent
  if (error.notSent) return true; // never reached the server: safe for every method
  if (!isIdempotent(method)) return false; // a POST/PATCH may have been applied
  if (error.kind !== 'http') return true; // no (complete) answer: repeat a read
  return (error.status ?? 0) >= 500;
}

/** The code of an exchange that failed without an answer: the socket's, TLS's or the parser's. A body cut off
 * mid-way is ECONNRESET whether Node reported the reset or axios its "stream has been aborted". */
export function failureCode(err: unknown): string {
  if (isAxiosError(err) && err.code === AxiosError.ERR_BAD_RESPONSE && err.message === 'stream has been aborted')
    return 'ECONNRESET';
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

/** axios's own timeout (its socket idle timer), as opposed to a socket error with the same code. */
function isAxiosTimeout(err: unknown): boolean {
  return (
    isAxiosError(err) &&
    err.cause === undefined &&
    (err.code === AxiosError.ETIMEDOUT || err.code === AxiosError.ECONNABORTED)
  );
}

export function abortedError(t: CallTarget): CfsError {
  return new CfsError('aborted', `request aborted: ${t.method} ${t.url}`, t.method, t.url, t.route);
}

/** A complete answer outside 2xx (redirects are not followed): the status, the body parsed if it is JSON. */
export function httpError(status: number, text: string, t: CallTarget): CfsError {
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  const raw = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
  const detail = typeof raw === 'string' ? raw.slice(0, 500) : '';
  const message = `${status} from CFS for ${t.method} ${t.url}${detail ? `: ${detail}` : ''}`;
  return new CfsError('http', message, t.method, t.url, t.route, status, body);
}

/** Maps how an attempt ended (an axios error, or whatever else was thrown) onto a CfsError. */
export function toCfsError(err: unknown, t: CallTarget, attempt: AttemptRecord | undefined): CfsError {
  const { method, url, route } = t;
  if (attempt?.endedBy === 'deadline' || isAxiosTimeout(err)) {
    const limit = attempt ? `${attempt.limits.deadlineMs} ms ` : '';
    const message = `timeout (${limit}deadline) calling CFS ${method} ${url}`;
    return new CfsError('timeout', message, method, url, route);
  }
  const capped = isAxiosError(err) && err.code === AxiosError.ERR_BAD_RESPONSE && /^maxContentLength/.test(err.message);
  if (attempt?.endedBy === 'too-large' || capped) {
    const problem = capped ? err.message : `maxContentLength size of ${attempt?.limits.maxResponseBytes} exceeded`;
    return new CfsError(
      'invalid-response',
      `bad response from CFS for ${method} ${url}: ${problem}`,
      method,
      url,
      route,
    );
  }
  if (isCancel(err)) return abortedError(t); // not ended by this process: the caller's signal
  // A complete answer outside 2xx: axios has its body (text). A response without one was cut off or failed mid-way.
  const data: unknown = isAxiosError(err) ? err.response?.data : undefined;
  if (isAxiosError(err) && err.response && typeof data === 'string') return httpError(err.response.status, data, t);
  const code = failureCode(err);
  // EHOSTUNREACH and the like can also end an established connection: only a socket that never connected is proof
  const notSent = NOT_SENT_CODES.has(code) && !attempt?.connected;
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || code === CONNECT_TIMEOUT_CODE) {
    const message = `timeout (${code}) calling CFS ${method} ${url}`;
    return new CfsError('timeout', message, method, url, route, undefined, undefined, notSent);
  }
  const message = `cannot reach CFS at ${url}: ${code || (err as Error | undefined)?.message || String(err)}`;
  return new CfsError('unreachable', message, method, url, route, undefined, undefined, notSent);
}

/** The JSON body of a 2xx answer, undefined for an empty one. */
export function parseBody(text: string, t: CallTarget): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const message = `Non-JSON response from CFS for ${t.method} ${t.url}: ${(err as Error).message}`;
    throw new CfsError('invalid-response', message, t.method, t.url, t.route, 200, text.slice(0, 200));
  }
}
