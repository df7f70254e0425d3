/**
 * The CFS transport against connections that fail: resets before and after the headers, refused connections, sockets
 * that never connect, and keep-alive sockets the server closed.
 *
 * A POST whose reused keep-alive socket is reset before any byte of the answer: Node reports ECONNRESET ("socket
 * hang up") whether the server closed an idle socket just as the request went out (nothing applied) or read the
 * request, applied it and died (applied). The client cannot tell the two apart, so such a POST stays uncertain:
 * not repeated, notSent false (the batcher then looks the session up before creating it again).
 */
import dns from 'node:dns';
import http from 'node:http';
import { failure } from '../helpers/cfs-failure';
import {
  SESSION,
  cutAfterHeaders,
  json,
  resetBeforeAnswer,
  startHostile,
  type Hostile,
  client,
  requests,
  server,
  useHostileServer,
  replaceServer,
} from './hostile-server';

useHostileServer();

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
    replaceServer(await restarted!);
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
