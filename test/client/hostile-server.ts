/**
 * A server on 127.0.0.1 that tries to break the CFS transport (node:http, no axios), the handlers it misbehaves with,
 * and the client the hostile-transport tests point at it. Everything waits on events (the server's or onRequest's).
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { CfsClient, type CfsClientOptions, type RequestInfo } from '@cfs-batcher/shared';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export interface Hostile {
  baseUrl: string;
  port: number;
  /** Requests seen (after their body was read), as `METHOD /path`. */
  seen: string[];
  /** TCP connections accepted so far. */
  connections: Socket[];
  /** Handlers by `METHOD /path`, each used once, the last one for every later request. */
  on(key: string, ...handlers: Handler[]): void;
  close(): Promise<void>;
}

export async function startHostile(server: http.Server = http.createServer(), port = 0): Promise<Hostile> {
  const routes = new Map<string, Handler[]>();
  const seen: string[] = [];
  const connections: Socket[] = [];
  server.on('connection', (s: Socket) => connections.push(s));
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      seen.push(key);
      const queue = routes.get(key);
      const handler = queue && (queue.length > 1 ? queue.shift() : queue[0]);
      if (!handler) {
        res.writeHead(599).end();
        return;
      }
      handler(req, res, Buffer.concat(chunks).toString());
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  const scheme = server instanceof https.Server ? 'https' : 'http';
  return {
    baseUrl: `${scheme}://127.0.0.1:${actual}/v3`,
    port: actual,
    seen,
    connections,
    on: (key, ...handlers) => routes.set(key, handlers),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of connections) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export const json =
  (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

/** Writes a space every few ms after the headers: the body never ends and the socket is never idle for long. */
export const trickle: Handler = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write('{"a":');
  const timer = setInterval(() => res.write(' '), 20);
  res.on('close', () => clearInterval(timer));
};

/** Headers and half the body announced, then the connection is closed (a FIN: what was sent is still read). */
export const cutAfterHeaders: Handler = (req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
  res.write('{"batch_size":', () => req.socket.destroy());
};

/** The request was read (and, for all the client knows, applied); the connection is reset with no answer. */
export const resetBeforeAnswer: Handler = (req) => {
  req.socket.resetAndDestroy();
};

export const SESSION = { name: 'batcher-x', configuration_name: 'c' };

/** A client of `server` with short deadlines, recording every attempt in `requests`; `extra` overrides any option. */
export const hostileClient = (server: Hostile, requests: RequestInfo[], extra: Partial<CfsClientOptions> = {}) =>
  new CfsClient({
    baseUrl: server.baseUrl,
    connectTimeoutMs: 1000,
    requestTimeoutMs: 300,
    retryBudgetMs: 5000,
    onRequest: (r) => requests.push(r),
    ...extra,
  });

/**
 * The per-test server the hostile-transport files share: a fresh one before each test (closed after it) and the
 * attempts its client reported. Read through these bindings: an imported `let` always shows the current test's.
 */
export let server: Hostile;
export let requests: RequestInfo[];
export const client = (extra: Partial<CfsClientOptions> = {}): CfsClient => hostileClient(server, requests, extra);

/** A test that restarts the server on its port hands the new one over, to be read and closed after it. */
export function replaceServer(next: Hostile): void {
  server = next;
}

export function useHostileServer(): void {
  beforeEach(async () => {
    server = await startHostile();
    requests = [];
  });
  afterEach(() => server.close());
}
