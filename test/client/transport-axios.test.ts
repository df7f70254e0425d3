/**
 * Where axios behaves in its own way, what it does (asserted on a bare axios call, so an axios upgrade that changes
 * it shows here) and how the CFS client reads it: its error for a body cut off mid-way, for a body over the cap
 * (counted after decompression), its own timeout (a socket idle timer that a trickling body never trips), its proxy
 * variables, a POST that axios-retry repeats after a refused connection, and the query encoding CFS has always had. 127.0.0.1 only; every wait is an event.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import axios, { AxiosError } from 'axios';
import fc from 'fast-check';
import { CfsClient, type CfsClientOptions, type RequestInfo } from '@cfs-batcher/shared';
import { toCfsError } from '../../shared/src/cfs/outcome';
import { failure } from '../helpers/cfs-failure';
import { json, startFakeServer, type FakeServer, type Reply } from './fake-server';

let server: FakeServer;
let requests: RequestInfo[];
const client = (extra: Partial<CfsClientOptions> = {}) =>
  new CfsClient({
    baseUrl: server.baseUrl,
    requestTimeoutMs: 1000,
    retryBudgetMs: 0,
    onRequest: (r) => requests.push(r),
    ...extra,
  });
/** The bare axios call: its http adapter, the answer as text, nothing of the client's. */
const bare = (path: string, extra: Parameters<typeof axios.get>[1] = {}) =>
  axios.get<string>(`${server.baseUrl}${path}`, { adapter: 'http', responseType: 'text', ...extra });
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(AxiosError);
      return err as AxiosError;
    },
  );

/** Headers announcing 100 bytes, 5 of them, then the connection closed. */
const cutOff: Reply = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
  res.write('{"a":', () => res.socket?.destroy());
};
/** 5 kB of JSON in a gzip body of a few dozen bytes. */
const inflating: Reply = (_req, res) => {
  const body = zlib.gzipSync(JSON.stringify({ x: 'x'.repeat(5000) }));
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Content-Length': body.length });
  res.end(body);
};
/** A complete answer sent as 60 chunks, one every 25 ms (1.5 s or more in all). */
const slowButSteady: Reply = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  let sent = 0;
  const timer = setInterval(() => {
    if (++sent < 60) res.write(' ');
    else {
      clearInterval(timer);
      res.end('{"done":true}');
    }
  }, 25);
  res.on('close', () => clearInterval(timer));
};

beforeEach(async () => {
  server = await startFakeServer();
  requests = [];
});
afterEach(() => server.close());

describe('a body cut off mid-way', () => {
  it('axios reports "stream has been aborted" (ERR_BAD_RESPONSE, no body); the client an ECONNRESET', async () => {
    server.on('GET /v3/options', cutOff);
    const err = await rejection(bare('/options'));
    expect(err).toMatchObject({ code: 'ERR_BAD_RESPONSE', message: 'stream has been aborted' });
    expect(err.response?.status).toBe(200); // a status, but no body: not an http error
    expect(err.response?.data).toBeUndefined();

    const cfs = await failure(client().getOptions());
    expect(cfs).toMatchObject({ kind: 'unreachable', notSent: false });
    expect(cfs.message).toMatch(/^cannot reach CFS at http:\/\/127\.0\.0\.1:\d+\/v3\/options: ECONNRESET$/);
    expect(requests.map((r) => r.status)).toEqual(['unreachable']);
  });
});

describe('a body over the cap', () => {
  it('axios counts the inflated bytes: a small gzip body that inflates past maxContentLength is refused', async () => {
    server.on('GET /v3/options', inflating);
    const err = await rejection(bare('/options', { maxContentLength: 1000 }));
    expect(err).toMatchObject({ code: 'ERR_BAD_RESPONSE', message: 'maxContentLength size of 1000 exceeded' });

    const cfs = await failure(client({ maxResponseBytes: 1000 }).getOptions());
    expect(cfs.kind).toBe('invalid-response');
    expect(cfs.message).toMatch(
      /^bad response from CFS for GET .*\/v3\/options: maxContentLength size of 1000 exceeded$/,
    );
  });
});

describe("axios's timeout", () => {
  it('is a socket idle timer: a body trickling for longer than it still completes', async () => {
    server.on('GET /v3/options', slowButSteady);
    // 1 s of silence would trip it; a chunk every 25 ms never does, though the whole body takes 1.5 s or more
    const res = await bare('/options', { timeout: 1000 });
    expect(JSON.parse(res.data)).toEqual({ done: true });
  });

  it("so the client's deadline covers the whole body: the same answer is a timeout with a 1 s deadline", async () => {
    server.on('GET /v3/options', slowButSteady);
    const cfs = await failure(client({ requestTimeoutMs: 1000 }).getOptions());
    expect(cfs).toMatchObject({ kind: 'timeout', notSent: false });
    expect(cfs.message).toMatch(/^timeout \(1000 ms deadline\) calling CFS GET /);
  });

  it('when it fires first (a silent server) the client reads it as the same deadline, never as "not sent"', async () => {
    server.on('POST /v3/sessions', () => undefined); // never answers
    const err = await rejection(axios.post(`${server.baseUrl}/sessions`, {}, { adapter: 'http', timeout: 50 }));
    expect(err).toMatchObject({ code: 'ECONNABORTED', message: 'timeout of 50ms exceeded' });
    const target = { method: 'POST', url: `${server.baseUrl}/sessions`, route: '/v3/sessions' };
    expect(toCfsError(err, target, undefined)).toMatchObject({
      kind: 'timeout',
      notSent: false,
      message: `timeout (deadline) calling CFS POST ${server.baseUrl}/sessions`,
    });
  });
});

describe('proxy variables', () => {
  const names = ['HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
  const saved = Object.fromEntries(names.map((k) => [k, process.env[k]]));
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('an HTTP_PROXY in the environment does not divert CFS calls (axios would follow it by default)', async () => {
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((resolve) => dead.close(resolve));
    for (const k of names) delete process.env[k];
    process.env.HTTP_PROXY = process.env.http_proxy = `http://127.0.0.1:${port}`;
    await expect(rejection(bare('/options'))).resolves.toMatchObject({ code: 'ECONNREFUSED' }); // the bare call goes there

    server.on('GET /v3/options', json(200, { direct: true }));
    await expect(client().getOptions()).resolves.toEqual({ direct: true });
    expect(server.seen).toHaveLength(1);
  });
});

describe('a POST repeated by axios-retry', () => {
  it('after a refused connection goes out whole: the same JSON body, Content-Type and length', async () => {
    const port = server.port;
    await server.close();
    const session = { name: 'batcher-x', configuration_name: 'c', tags: { é: 'ü' } };
    let restarted: Promise<FakeServer> | undefined;
    const c = client({
      baseUrl: `http://127.0.0.1:${port}/v3`,
      retryBudgetMs: 5000,
      onRequest: (r) => {
        requests.push(r);
        restarted ??= startFakeServer(port).then((s) => {
          s.on('POST /v3/sessions', json(201, { name: 'batcher-x' }));
          return s;
        });
      },
    });
    const created = await c.createSession(session).catch((err: unknown) => err);
    server = await restarted!;
    expect(created).toMatchObject({ name: 'batcher-x' });
    expect(server.seen).toHaveLength(1);
    const [post] = server.seen;
    expect(JSON.parse(post!.body)).toEqual(session);
    expect(post!.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(post!.body)),
    });
    expect(
      requests
        .map((r) => r.status)
        .slice(0, -1)
        .every((s) => s === 'unreachable'),
    ).toBe(true);
  });
});

describe('query encoding', () => {
  /** The encoding CFS has always received from this client: encodeURIComponent, with `:`, `$` and `,` left as they
   * are and a space as `+` (an id list goes as `a,b,c`, the length chunkIds budgets for). */
  const encoded = (v: string) =>
    encodeURIComponent(v).replace(/%3A/gi, ':').replace(/%24/g, '$').replace(/%2C/gi, ',').replace(/%20/g, '+');

  it('is the same for any value the client sends', async () => {
    server.on('GET /v3/sessions', json(200, { sessions: [], next: null }));
    const c = client();
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ maxLength: 12 }), async (a, b) => {
        const before = server.seen.length;
        await c.listAllSessions({ name_contains: a, min_age: b });
        expect(server.seen[before]!.url.split('?')[1]).toBe(`name_contains=${encoded(a)}&min_age=${encoded(b)}`);
      }),
      { numRuns: 150 },
    );
  });
});
