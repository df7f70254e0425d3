/**
 * One HTTP exchange with CFS on node:http / node:https, no retry: a connect timeout, a wall-clock deadline that
 * covers the headers and the whole body (a trickling body cannot hold a call), the caller's AbortSignal and a cap
 * on the body size. It answers with the status and the body text, or rejects with an AttemptFailure.
 */
import type http from 'node:http';

/** A socket that has not connected in time is destroyed with this code: the request never left this process. */
export const CONNECT_TIMEOUT_CODE = 'ECONNTIMEOUT';

export interface Exchange {
  /** `request` of node:http or node:https, looked up per call so a tracing patch applied later is honoured. */
  request: typeof http.request;
  agent: http.Agent;
  url: string;
  method: string;
  headers: http.OutgoingHttpHeaders;
  body?: Buffer;
  connectTimeoutMs: number;
  deadlineMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  /** The body as UTF-8 text, a leading byte order mark removed. */
  text: string;
  retryAfter?: string;
}

/** Why an exchange ended without an answer: `network` carries the socket or parser error's code. */
export type FailureReason = 'aborted' | 'deadline' | 'too-large' | 'network';

export class AttemptFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly code: string,
    message: string,
    /** The socket had connected (or came connected from the pool): request bytes may have left, whatever the code. */
    readonly connected = false,
  ) {
    super(message);
  }
}

export function exchange(x: Exchange): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let req: http.ClientRequest | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    let settled = false;
    let connected = false;
    const settle = (failure: AttemptFailure | undefined, answer?: Answer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(connectTimer);
      x.signal?.removeEventListener('abort', onAbort);
      if (failure) {
        req?.destroy(); // the socket goes with it: never back to the keep-alive pool half-read
        reject(failure);
      } else resolve(answer!);
    };
    const fail = (reason: FailureReason, code: string, message: string) =>
      settle(new AttemptFailure(reason, code, message, connected));
    const onAbort = () => fail('aborted', 'ERR_CANCELED', 'aborted by the caller');
    const tooLarge = () =>
      fail('too-large', 'ERR_BAD_RESPONSE', `maxContentLength size of ${x.maxResponseBytes} exceeded`);
    const deadline = setTimeout(
      () => fail('deadline', 'ERR_DEADLINE', `no complete answer within ${x.deadlineMs} ms`),
      x.deadlineMs,
    );
    deadline.unref();
    if (x.signal?.aborted) return onAbort();
    x.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      req = x.request(x.url, { method: x.method, headers: x.headers, agent: x.agent });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return fail('network', e.code ?? '', e.message);
    }
    // Stays attached after settling: destroying a request can still emit 'error' ("socket hang up").
    req.on('error', (err: NodeJS.ErrnoException) => fail('network', err.code ?? '', err.message));
    req.once('socket', (socket) => {
      connected = !socket.connecting; // a keep-alive socket from the pool is already connected
      if (connected || settled) return;
      socket.once('connect', () => void (connected = true));
      connectTimer = setTimeout(() => {
        const err = Object.assign(new Error(`connect timeout after ${x.connectTimeoutMs} ms`), {
          code: CONNECT_TIMEOUT_CODE,
        });
        socket.destroy(err);
      }, x.connectTimeoutMs);
      connectTimer.unref();
      const clear = () => clearTimeout(connectTimer);
      socket.once('connect', clear);
      socket.once('close', clear);
    });
    req.on('response', (res: http.IncomingMessage) => {
      res.on('error', (err: NodeJS.ErrnoException) => fail('network', err.code ?? 'ECONNRESET', err.message));
      res.on('close', () => {
        if (!res.complete) fail('network', 'ECONNRESET', 'connection closed before the answer was complete');
      });
      if (Number(res.headers['content-length']) > x.maxResponseBytes) return tooLarge(); // not worth reading
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > x.maxResponseBytes) return tooLarge();
        chunks.push(chunk);
      });
      res.on('end', () => {
        let text = Buffer.concat(chunks, size).toString('utf8');
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        const retryAfter = res.headers['retry-after'];
        settle(undefined, { status: res.statusCode ?? 0, text, retryAfter });
      });
    });
    req.end(x.body);
  });
}

/** Waits `ms`; resolves true at once if `signal` aborts meanwhile. */
export function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(false);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Percent-encoding of a query key or value as CFS has always received it from this client (axios' encoding):
 * encodeURIComponent with `:`, `$` and `,` left as they are and a space as `+`. An id list goes as `a,b,c`, the form
 * chunkIds' length budget was set against; URLSearchParams would send each comma as `%2C` (3 characters). */
function encodeQuery(s: string): string {
  return encodeURIComponent(s).replace(/%3A/gi, ':').replace(/%24/g, '$').replace(/%2C/gi, ',').replace(/%20/g, '+');
}

/** `url` with `params` appended as a query string (undefined and null values left out). */
export function withQuery(url: string, params: Record<string, string> | undefined): string {
  if (!params) return url;
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null) pairs.push(`${encodeQuery(k)}=${encodeQuery(String(v))}`);
  return pairs.length === 0 ? url : `${url}${url.includes('?') ? '&' : '?'}${pairs.join('&')}`;
}
