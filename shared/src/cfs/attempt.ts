/**
 * One attempt of a CFS call, watched from the Node side of axios's http adapter through axios's `transport` option
 * (the module whose `request` the adapter calls). It records whether the socket connected: from then on the request
 * may have reached CFS, whatever error follows. It adds what axios leaves to the caller:
 * - a connect timeout (a socket still connecting is destroyed with ECONNTIMEOUT: nothing was sent);
 * - a deadline over the headers and the whole body (axios's own `timeout` is a socket idle timeout that every chunk
 *   restarts, so a trickling body would hold a call);
 * - the size cap applied to a declared Content-Length at the headers (axios's `maxContentLength` counts the bytes as
 *   they arrive, so a body announced too large and sent slowly would be waited for).
 * The attempt ends itself through the AbortSignal it hands to axios; axios then rejects with a CanceledError and
 * destroys the request with its socket (never returned to the keep-alive pool half-read).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { CfsError } from './errors';

/** The code a socket that has not connected in time is destroyed with: the request never left this process. */
export const CONNECT_TIMEOUT_CODE = 'ECONNTIMEOUT';

export interface AttemptLimits {
  connectTimeoutMs: number;
  deadlineMs: number;
  maxResponseBytes: number;
}

/** Why this process ended an attempt itself (the caller's abort comes through its own signal). */
export type AttemptEnd = 'deadline' | 'too-large';

/** What axios's `transport` option must provide: node:http's or node:https's `request(options, onResponse)`. */
export interface RequestModule {
  request(options: http.RequestOptions, onResponse: (res: http.IncomingMessage) => void): http.ClientRequest;
}

/** What is read of an attempt once axios has it (structural, so the config field that holds it can be declared on
 * axios's config by each copy of this module alike). */
export interface AttemptRecord {
  readonly startedAt: number;
  readonly connected: boolean;
  readonly endedBy?: AttemptEnd;
  outcome?: CfsError;
  readonly limits: AttemptLimits;
  finish(): void;
}

export class Attempt implements AttemptRecord {
  readonly startedAt = Date.now();
  /** The socket connected, or came connected from the keep-alive pool: request bytes may have left. */
  connected = false;
  endedBy?: AttemptEnd;
  /** How the attempt ended, as the caller would see it (set when axios has failed it; read by the retry rule). */
  outcome?: CfsError;
  /** The signal for axios: the caller's abort, the deadline or the size cap ends the attempt. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly deadline: NodeJS.Timeout;
  private connectTimer?: NodeJS.Timeout;

  constructor(
    readonly limits: AttemptLimits,
    caller?: AbortSignal,
  ) {
    this.signal = caller ? AbortSignal.any([caller, this.controller.signal]) : this.controller.signal;
    this.deadline = setTimeout(() => this.end('deadline'), limits.deadlineMs);
    this.deadline.unref();
  }

  /** A `transport` for axios over `module`, whose `request` is looked up at each attempt (so a tracing patch applied
   * after the client was built is honoured). */
  transport(module: RequestModule): RequestModule {
    return {
      request: (options, onResponse) => {
        const req = module.request(options, (res) => {
          onResponse(res);
          if (Number(res.headers['content-length']) > this.limits.maxResponseBytes) this.end('too-large');
        });
        req.once('socket', (socket: Socket) => this.watch(socket));
        return req;
      },
    };
  }

  /** Stops the attempt's timers; called once axios has answered or failed. */
  finish(): void {
    clearTimeout(this.deadline);
    clearTimeout(this.connectTimer);
  }

  private end(reason: AttemptEnd): void {
    if (this.signal.aborted) return;
    this.endedBy = reason;
    this.controller.abort();
  }

  private watch(socket: Socket): void {
    this.connected = !socket.connecting;
    if (this.connected || this.signal.aborted) return;
    const { connectTimeoutMs } = this.limits;
    socket.once('connect', () => {
      this.connected = true;
      clearTimeout(this.connectTimer);
    });
    socket.once('close', () => clearTimeout(this.connectTimer));
    this.connectTimer = setTimeout(() => {
      const err = Object.assign(new Error(`connect timeout after ${connectTimeoutMs} ms`), {
        code: CONNECT_TIMEOUT_CODE,
      });
      socket.destroy(err);
    }, connectTimeoutMs);
    this.connectTimer.unref();
  }
}
