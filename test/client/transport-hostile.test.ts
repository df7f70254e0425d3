/**
 * The CFS transport (node:http, no axios) against a server on 127.0.0.1 that tries to break it: bodies that trickle
 * or never end, resets before and after the headers, refused connections, keep-alive sockets the server closed, an
 * abort during the retry delay, redirects, TLS. Everything waits on events (the server's or onRequest's); no sleeps.
 *
 * A POST whose reused keep-alive socket is reset before any byte of the answer: Node reports ECONNRESET ("socket
 * hang up") whether the server closed an idle socket just as the request went out (nothing applied) or read the
 * request, applied it and died (applied). The client cannot tell the two apart, so such a POST stays uncertain:
 * not repeated, notSent false (the batcher then looks the session up before creating it again).
 */
import { execFileSync } from 'node:child_process';
import dns from 'node:dns';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CfsClient, type CfsClientOptions, type RequestInfo } from '@cfs-batcher/shared';
import { failure } from '../helpers/cfs-failure';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

interface Hostile {
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

async function startHostile(server: http.Server = http.createServer(), port = 0): Promise<Hostile> {
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

const json =
  (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

/** Writes a space every few ms after the headers: the body never ends and the socket is never idle for long. */
const trickle: Handler = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write('{"a":');
  const timer = setInterval(() => res.write(' '), 20);
  res.on('close', () => clearInterval(timer));
};

/** Headers and half the body announced, then the connection is closed (a FIN: what was sent is still read). */
const cutAfterHeaders: Handler = (req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
  res.write('{"batch_size":', () => req.socket.destroy());
};

/** The request was read (and, for all the client knows, applied); the connection is reset with no answer. */
const resetBeforeAnswer: Handler = (req) => {
  req.socket.resetAndDestroy();
};

const SESSION = { name: 'batcher-x', configuration_name: 'c' };
let server: Hostile;
let requests: RequestInfo[];
const client = (extra: Partial<CfsClientOptions> = {}) =>
  new CfsClient({
    baseUrl: server.baseUrl,
    connectTimeoutMs: 1000,
    requestTimeoutMs: 300,
    retryBudgetMs: 5000,
    onRequest: (r) => requests.push(r),
    ...extra,
  });

beforeEach(async () => {
  server = await startHostile();
  requests = [];
});
afterEach(() => server.close());

describe('a body that trickles forever', () => {
  it('ends each GET attempt at the deadline and repeats the GET', async () => {
    server.on('GET /v3/options', trickle, json(200, { batch_size: 3 }));
    await expect(client().getOptions()).resolves.toEqual({ batch_size: 3 });
    expect(server.seen).toEqual(['GET /v3/options', 'GET /v3/options']);
    expect(requests.map((r) => r.status)).toEqual(['timeout', '200']);
  });

  it('ends a POST at the deadline as a timeout that may have been applied, never repeated', async () => {
    server.on('POST /v3/sessions', trickle);
    const err = await failure(client().createSession(SESSION));
    expect(err).toMatchObject({ kind: 'timeout', notSent: false, method: 'POST' });
    expect(err.message).toMatch(
      /^timeout \(300 ms deadline\) calling CFS POST http:\/\/127\.0\.0\.1:\d+\/v3\/sessions$/,
    );
    expect(server.seen).toEqual(['POST /v3/sessions']);
    expect(requests.map((r) => r.status)).toEqual(['timeout']);
  });
});

describe('resets and cut answers', () => {
  it('a GET cut off after the headers is repeated and succeeds', async () => {
    server.on('GET /v3/options', cutAfterHeaders, json(200, { batch_size: 5 }));
    await expect(client().getOptions()).resolves.toEqual({ batch_size: 5 });
    expect(server.seen).toHaveLength(2);
    expect(requests.map((r) => r.status)).toEqual(['unreachable', '200']);
  });

  it('a POST cut off after the headers is not repeated', async () => {
    server.on('POST /v3/sessions', cutAfterHeaders);
    const err = await failure(client().createSession(SESSION));
    expect(err).toMatchObject({ kind: 'unreachable', notSent: false });
    expect(server.seen).toEqual(['POST /v3/sessions']);
  });

  it('a POST reset after it was sent, before any answer, is not repeated: the server saw exactly one', async () => {
    server.on('POST /v3/sessions', resetBeforeAnswer);
    const err = await failure(client().createSession(SESSION));
    expect(err).toMatchObject({ kind: 'unreachable', notSent: false });
    expect(err.message).toMatch(/^cannot reach CFS at http:\/\/127\.0\.0\.1:\d+\/v3\/sessions: ECONNRESET$/);
    expect(server.seen).toEqual(['POST /v3/sessions']);
    expect(requests.map((r) => r.status)).toEqual(['unreachable']);
  });

  it('a refused POST is repeated (it never left) and reaches the server once it listens', async () => {
    const port = server.port;
    await server.close();
    let restarted: Promise<Hostile> | undefined;
    const c = client({
      baseUrl: `http://127.0.0.1:${port}/v3`,
      onRequest: (r) => {
        requests.push(r);
        // the first refusal brings the server up; the retry (500 ms or more later) finds it
        restarted ??= startHostile(http.createServer(), port).then((s) => {
          s.on('POST /v3/sessions', json(201, { name: 'batcher-x' }));
          return s;
        });
      },
    });
    const created = await c.createSession(SESSION).catch((err: unknown) => err);
    server = await restarted!;
    expect(created).toMatchObject({ name: 'batcher-x' });
    const statuses = requests.map((r) => r.status);
    expect(statuses.pop()).toBe('201'); // after one refusal, or more if the server was slow to come up
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((st) => st === 'unreachable')).toBe(true);
    expect(server.seen).toEqual(['POST /v3/sessions']);
  });
});

describe('connect timeout', () => {
  afterEach(() => jest.restoreAllMocks());

  it('a socket that never connects is ECONNTIMEOUT, never sent: even a POST is repeated', async () => {
    // a name lookup that never answers keeps the socket connecting, as an unanswered SYN would
    let lookups = 0;
    jest.spyOn(dns, 'lookup').mockImplementation(() => void lookups++);
    const c = client({
      baseUrl: 'http://cfs.invalid/v3',
      connectTimeoutMs: 50,
      requestTimeoutMs: 60_000,
      retryBudgetMs: 1000,
    });
    const err = await failure(c.createSession(SESSION));
    expect(err).toMatchObject({ kind: 'timeout', notSent: true, method: 'POST' });
    expect(err.message).toBe('timeout (ECONNTIMEOUT) calling CFS POST http://cfs.invalid/v3/sessions');
    expect(requests.length).toBeGreaterThan(1);
    expect(requests.every((r) => r.status === 'timeout')).toBe(true);
    expect(lookups).toBe(requests.length);
  });
});

describe('oversized bodies', () => {
  it('a declared length over maxResponseBytes is refused without reading it; the socket is dropped', async () => {
    let dropped!: Promise<void>;
    server.on('GET /v3/options', (_req, res) => {
      dropped = new Promise((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '5000' });
      res.write('{"a":"');
    });
    const err = await failure(client({ maxResponseBytes: 1000, retryBudgetMs: 0 }).getOptions());
    expect(err).toMatchObject({ kind: 'invalid-response' });
    expect(err.message).toMatch(
      /^bad response from CFS for GET .*\/v3\/options: maxContentLength size of 1000 exceeded$/,
    );
    await dropped;
  });

  it('a body that keeps coming past maxResponseBytes is abandoned; the server sees its socket closed', async () => {
    let dropped!: Promise<void>;
    server.on('GET /v3/options', (_req, res) => {
      dropped = new Promise((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'Content-Type': 'application/json' }); // chunked: no length to refuse it by
      const timer = setInterval(() => res.write('x'.repeat(256)), 5);
      res.on('close', () => clearInterval(timer));
    });
    const err = await failure(client({ maxResponseBytes: 1000, retryBudgetMs: 0 }).getOptions());
    expect(err).toMatchObject({ kind: 'invalid-response' });
    expect(err.message).toMatch(/maxContentLength size of 1000 exceeded$/);
    await dropped;
    expect(server.seen).toHaveLength(1);
  });

  it('a POST answered with too large a body is not repeated', async () => {
    server.on('POST /v3/sessions', json(201, { name: 'x'.repeat(2000) }));
    const err = await failure(client({ maxResponseBytes: 1000 }).createSession(SESSION));
    expect(err.kind).toBe('invalid-response');
    expect(server.seen).toEqual(['POST /v3/sessions']);
  });
});

describe('cancellation', () => {
  it('an abort during the retry delay ends the call at once, with no further attempt', async () => {
    const ac = new AbortController();
    server.on('GET /v3/options', json(503, { title: 'busy' }, { 'Retry-After': '60' }));
    const c = client({
      retryBudgetMs: 60_000,
      onRequest: (r) => {
        requests.push(r);
        setImmediate(() => ac.abort()); // the transport is waiting out the (5 s) delay by then
      },
    });
    const err = await failure(c.getOptions({ signal: ac.signal }));
    expect(err).toMatchObject({ kind: 'aborted', notSent: false });
    expect(err.message).toMatch(/^request aborted: GET /);
    expect(server.seen).toEqual(['GET /v3/options']);
    expect(requests.map((r) => r.status)).toEqual(['503']);
  });

  it('an abort while the body trickles in ends the attempt as aborted, not a timeout, and is not retried', async () => {
    const ac = new AbortController();
    server.on('GET /v3/options', (req, res) => {
      trickle(req, res, '');
      ac.abort();
    });
    const err = await failure(client({ requestTimeoutMs: 60_000 }).getOptions({ signal: ac.signal }));
    expect(err.kind).toBe('aborted');
    expect(server.seen).toHaveLength(1);
  });
});

describe('keep-alive', () => {
  it('reuses one socket, and a socket the server closed between calls does not fail the next GET', async () => {
    server.on('GET /v3/options', json(200, { n: 1 }));
    const c = client();
    await c.getOptions();
    await c.getOptions();
    expect(server.connections).toHaveLength(1); // the second call went on the first call's socket
    const closed = new Promise((resolve) => server.connections[0]!.on('close', resolve));
    server.connections[0]!.destroy();
    await closed;
    // The client may not have read the FIN yet: then the GET goes out on the dead socket, gets ECONNRESET and is
    // repeated on a new one (a GET may be); otherwise the pool has dropped the socket and the GET opens a new one.
    await expect(c.getOptions()).resolves.toEqual({ n: 1 });
    expect(server.seen).toHaveLength(3);
  });

  it('a POST reset on a reused socket before any byte of answer stays uncertain: not repeated', async () => {
    server.on('GET /v3/options', json(200, {}));
    server.on('POST /v3/sessions', resetBeforeAnswer);
    const c = client();
    await c.getOptions();
    const err = await failure(c.createSession(SESSION));
    expect(server.connections).toHaveLength(1); // the POST went on the GET's keep-alive socket
    expect(err).toMatchObject({ kind: 'unreachable', notSent: false });
    expect(err.message).toMatch(/ECONNRESET$/);
    expect(server.seen).toEqual(['GET /v3/options', 'POST /v3/sessions']);
  });
});

describe('answers that are not JSON 2xx', () => {
  it('a redirect is not followed: an http error with its status', async () => {
    server.on('GET /v3/options', (_req, res) => res.writeHead(302, { Location: '/v3/elsewhere' }).end());
    const err = await failure(client().getOptions());
    expect(err).toMatchObject({ kind: 'http', status: 302, body: '' });
    expect(err.message).toMatch(/^302 from CFS for GET http:\/\/127\.0\.0\.1:\d+\/v3\/options$/);
    expect(server.seen).toEqual(['GET /v3/options']);
  });

  it('a 5xx with a Problem body carries the detail in the message; a text body is kept as text', async () => {
    server.on('POST /v3/sessions', json(500, { title: 'Internal', detail: 'Kafka is down' }));
    const err = await failure(client().createSession(SESSION));
    expect(err.message).toMatch(/^500 from CFS for POST .*\/v3\/sessions: Kafka is down$/);
    expect(err.body).toEqual({ title: 'Internal', detail: 'Kafka is down' });
    server.on('DELETE /v3/sessions/s1', (_req, res) => res.writeHead(404).end('gone'));
    const gone = await failure(client().deleteSession('s1'));
    expect(gone).toMatchObject({ kind: 'http', status: 404, body: 'gone' });
  });

  it('sends JSON with its length and Accept; parses a body split in many chunks', async () => {
    const big = { components: Array.from({ length: 300 }, (_, i) => ({ id: `x${i}-é€` })), next: null };
    let headers: http.IncomingHttpHeaders = {};
    let received = '';
    let query = '';
    server.on('POST /v3/sessions', (req, res, body) => {
      headers = req.headers;
      received = body;
      res.writeHead(201, { 'Content-Type': 'application/json' });
      const text = JSON.stringify({ name: 'batcher-x', é: 'ü' });
      for (let i = 0; i < text.length; i += 3) res.write(text.slice(i, i + 3));
      res.end();
    });
    server.on('GET /v3/components', (req, res) => {
      query = (req.url ?? '').split('?')[1] ?? '';
      const text = Buffer.from(JSON.stringify(big));
      res.writeHead(200);
      for (let i = 0; i < text.length; i += 7) res.write(text.subarray(i, i + 7)); // splits multi-byte chars too
      res.end();
    });
    await expect(client().createSession(SESSION)).resolves.toEqual({ name: 'batcher-x', é: 'ü' });
    expect(JSON.parse(received)).toEqual(SESSION);
    expect(headers).toMatchObject({
      accept: 'application/json',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(received)),
    });
    const page = await client().listAllComponents({ ids: ['a b', 'c:d'] });
    expect(page.components.map((c) => c.id)).toEqual(big.components.map((c) => c.id));
    expect(query).toBe('ids=a+b,c:d'); // the query encoding CFS always got from this client (commas as they are)
  });
});

describe('https', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cfs-tls-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
        .concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'])
        .concat(['-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'ca.pem')]),
      { stdio: 'ignore' },
    );
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('verifies the server against CA_CERT, and refuses it without', async () => {
    const [key, cert] = await Promise.all([
      fs.readFile(path.join(dir, 'key.pem')),
      fs.readFile(path.join(dir, 'ca.pem')),
    ]);
    const tls = await startHostile(https.createServer({ key, cert }));
    try {
      tls.on('GET /v3/options', json(200, { tls: true }));
      const c = client({ baseUrl: tls.baseUrl, caCertPath: path.join(dir, 'ca.pem') });
      await expect(c.getOptions()).resolves.toEqual({ tls: true });
      await expect(c.getOptions()).resolves.toEqual({ tls: true });
      expect(tls.connections).toHaveLength(1); // keep-alive over TLS too
      const err = await failure(client({ baseUrl: tls.baseUrl, retryBudgetMs: 0 }).getOptions());
      expect(err).toMatchObject({ kind: 'unreachable', notSent: false });
      expect(err.message).toMatch(/SELF_SIGNED/);
    } finally {
      await tls.close();
    }
  });
});
