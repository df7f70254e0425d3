/**
 * The CFS transport against bodies that never end or grow too large: a trickling body ends each attempt at the
 * deadline (a GET is repeated, a POST is not), an oversized one is refused or abandoned and its socket dropped.
 */
import { failure } from '../helpers/cfs-failure';
import { SESSION, json, trickle, client, requests, server, useHostileServer } from './hostile-server';

useHostileServer();

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
