/** A scriptable HTTP server on 127.0.0.1 for client tests: each route answers from a queue of handlers. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export type Reply = (req: Seen, res: http.ServerResponse) => void;

export interface FakeServer {
  baseUrl: string;
  port: number;
  seen: Seen[];
  on(methodAndPath: string, ...replies: Reply[]): void;
  close(): Promise<void>;
}

export const json =
  (status: number, body: unknown): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
export const text =
  (status: number, body: string): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(body);
  };
/** Never answers: the client's timeout must end the call. */
export const hang: Reply = () => undefined;

/** On `port` (0: any free one). */
export async function startFakeServer(port = 0): Promise<FakeServer> {
  const routes = new Map<string, Reply[]>();
  const seen: Seen[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      const key = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      const queue = routes.get(key);
      const reply = queue && (queue.length > 1 ? queue.shift() : queue[0]);
      if (!reply) return json(599, { title: `no route ${key}` })(s, res);
      reply(s, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${actual}/v3`,
    port: actual,
    seen,
    on: (k, ...replies) => routes.set(k, replies),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
