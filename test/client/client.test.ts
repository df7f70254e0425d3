import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CfsClient, chunkIds, nextToParams, type RequestInfo } from '@cfs-batcher/shared';
import { hang, json, startFakeServer, text, type FakeServer } from './fake-server';
import { failure } from '../helpers/cfs-failure';

let server: FakeServer;
const requests: RequestInfo[] = [];
const client = (extra: Partial<ConstructorParameters<typeof CfsClient>[0]> = {}) =>
  new CfsClient({
    baseUrl: server.baseUrl,
    requestTimeoutMs: 500,
    connectTimeoutMs: 300,
    retryBudgetMs: 3000,
    onRequest: (r) => requests.push(r),
    ...extra,
  });

beforeEach(async () => {
  server = await startFakeServer();
  requests.length = 0;
});
afterEach(() => server.close());

describe('paging', () => {
  it('follows next exactly as the server returns it, dropping nulls', async () => {
    const next = { ids: '', status: 'pending', enabled: true, config_name: null, limit: 2, after_id: 'x2' };
    server.on(
      'GET /v3/components',
      json(200, { components: [{ id: 'x1' }, { id: 'x2' }], next }),
      json(200, { components: [{ id: 'x3' }], next: null }),
    );
    const all = await client().listAllComponents({ status: 'pending', enabled: true }, { pageSize: 2 });
    expect(all.components.map((c) => c.id)).toEqual(['x1', 'x2', 'x3']);
    const second = new URL(server.seen[1]!.url, 'http://h');
    expect(Object.fromEntries(second.searchParams)).toEqual({
      ids: '',
      status: 'pending',
      enabled: 'true',
      limit: '2',
      after_id: 'x2',
    });
  });

  it('refuses a next that does not advance instead of looping forever', async () => {
    server.on('GET /v3/sessions', json(200, { sessions: [{ name: 'a' }], next: { after_id: 'a' } }));
    const err = await failure(client().listAllSessions({}));
    expect(err.kind).toBe('invalid-response');
    expect(err.message).toMatch(/paging does not advance/);
    expect(server.seen.length).toBe(2);
  });

  it('reports invalid records with the reason and keeps the valid ones', async () => {
    server.on(
      'GET /v3/components',
      json(200, { components: [{ id: 'ok1' }, { id: 'bad', error_count: 'two' }, 7], next: null }),
    );
    const page = await client().listAllComponents({});
    expect(page.components.map((c) => c.id)).toEqual(['ok1']);
    expect(page.invalid).toHaveLength(2);
    expect(page.invalid[0]).toMatchObject({ index: 1, id: 'bad' });
    expect(page.invalid[0]!.problem).toMatch(/error_count/);
  });

  it('splits long id lists into several queries within the URL limit', async () => {
    const ids = Array.from({ length: 900 }, (_, i) => `x3000c0s${i}b0n0`);
    server.on('GET /v3/components', json(200, { components: [], next: null }));
    await client().listAllComponents({ ids });
    expect(server.seen.length).toBeGreaterThan(1);
    for (const s of server.seen) expect(s.url.length).toBeLessThan(4500);
    const sent = server.seen.flatMap((s) => new URL(s.url, 'http://h').searchParams.get('ids')!.split(','));
    expect(sent).toEqual(ids);
  });
});

describe('invalid answers become typed errors', () => {
  it.each([
    ['a null body', json(200, null), 'invalid-response'],
    ['no sessions array', json(200, { next: null }), 'invalid-response'],
    ['sessions not an array', json(200, { sessions: { a: 1 } }), 'invalid-response'],
    ['non-JSON', text(200, '<html>oops'), 'invalid-response'],
    ['an empty body', text(200, ''), 'invalid-response'],
  ])('%s on GET /v3/sessions', async (_what, reply, kind) => {
    server.on('GET /v3/sessions', reply);
    const err = await failure(client().listAllSessions({ name_contains: 'batcher-' }));
    expect(err.kind).toBe(kind);
    expect(err.url).toContain('/v3/sessions');
  });

  it('labels each call with the path really requested: the base URL path plus the template', async () => {
    const origin = new URL(server.baseUrl).origin;
    server.on('GET /apis/cfs/v3/options', json(200, {}));
    server.on('GET /apis/cfs/sessions/batcher-1', json(404, { title: 'Not Found', status: 404 }));
    await client({ baseUrl: `${origin}/apis/cfs/v3/` }).getOptions();
    const err = await failure(client({ baseUrl: `${origin}/apis/cfs` }).getSession('batcher-1'));
    expect(err).toMatchObject({ kind: 'http', status: 404, route: '/apis/cfs/sessions/{session_name}' });
    expect(requests.map((r) => r.route)).toEqual(['/apis/cfs/v3/options', '/apis/cfs/sessions/{session_name}']);
    expect(client({ baseUrl: origin }).route('components')).toBe('/components');
  });

  it('a 404 on a list endpoint is an http error with status and URL, not retried', async () => {
    server.on(
      'GET /v3/sessions',
      json(404, { type: 'about:blank', title: 'Not Found', detail: 'The requested URL was not found', status: 404 }),
    );
    const err = await failure(client().listAllSessions({}));
    expect(err).toMatchObject({ kind: 'http', status: 404, method: 'GET', route: '/v3/sessions' });
    expect(err.message).toContain('The requested URL was not found');
    expect(server.seen.length).toBe(1);
  });
});

describe('retries', () => {
  it('retries a GET on 5xx and succeeds', async () => {
    server.on(
      'GET /v3/options',
      json(503, { title: 'Unable to connect to the Redis database' }),
      json(503, {}),
      json(200, { batch_size: 25 }),
    );
    await expect(client().getOptions()).resolves.toEqual({ batch_size: 25 });
    expect(server.seen.length).toBe(3);
    expect(requests.map((r) => r.status)).toEqual(['503', '503', '200']);
  });

  it('stops retrying a GET when the retry budget is spent', async () => {
    server.on('GET /v3/options', json(500, {}));
    const err = await failure(client({ retryBudgetMs: 0 }).getOptions());
    expect(err).toMatchObject({ kind: 'http', status: 500 });
    expect(server.seen.length).toBe(1);
  });

  it('never repeats a POST that reached the server', async () => {
    server.on('POST /v3/sessions', json(503, { title: 'Kafka timeout error' }));
    const err = await failure(client().createSession({ name: 'batcher-x', configuration_name: 'c' }));
    expect(err.status).toBe(503);
    expect(server.seen.length).toBe(1);
  });

  it('a POST timeout is a timeout error and is not repeated', async () => {
    server.on('POST /v3/sessions', hang);
    const err = await failure(client().createSession({ name: 'batcher-x', configuration_name: 'c' }));
    expect(err.kind).toBe('timeout');
    expect(err.notSent).toBe(false);
    expect(server.seen.length).toBe(1);
  });

  it('a GET that times out is retried, then reported as a timeout', async () => {
    server.on('GET /v3/sessions/s1', hang);
    const err = await failure(client({ retryBudgetMs: 1200 }).getSession('s1'));
    expect(err.kind).toBe('timeout');
    expect(server.seen.length).toBeGreaterThan(1);
  });

  it('connection refused is unreachable and marked as never sent', async () => {
    const port = server.port;
    await server.close();
    const c = new CfsClient({ baseUrl: `http://127.0.0.1:${port}/v3`, retryBudgetMs: 0 });
    const err = await failure(c.createSession({ name: 'batcher-x', configuration_name: 'c' }));
    expect(err.kind).toBe('unreachable');
    expect(err.notSent).toBe(true);
    server = await startFakeServer(); // for afterEach
  });
});

describe('cancellation and auth', () => {
  it('an abort ends a hanging call at once with kind aborted', async () => {
    server.on('GET /v3/options', hang);
    const ac = new AbortController();
    const p = client({ requestTimeoutMs: 60000 }).getOptions({ signal: ac.signal });
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (server.seen.length > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 5);
    });
    ac.abort();
    expect((await failure(p)).kind).toBe('aborted');
  });

  it('sends the bearer token from the token file and re-reads it when it changes', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cfs-token-'));
    const file = path.join(dir, 'token');
    await fs.writeFile(file, 'first\n');
    server.on('GET /v3/options', json(200, {}));
    const c = client({ tokenFile: file });
    await c.getOptions();
    await fs.writeFile(file, 'second-token');
    await fs.utimes(file, new Date(), new Date(Date.now() + 5000));
    await c.getOptions();
    expect(server.seen.map((s) => s.headers.authorization)).toEqual(['Bearer first', 'Bearer second-token']);
    await fs.rm(dir, { recursive: true, force: true });
  });
});

describe('answers that must not hold or break a call', () => {
  it('a body that trickles in forever ends at the per-attempt deadline as a timeout', async () => {
    let timer: NodeJS.Timeout | undefined;
    server.on('GET /v3/options', (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"a":');
      timer = setInterval(() => res.write(' '), 100); // never idle long enough for a socket timeout
      res.on('close', () => clearInterval(timer));
    });
    const err = await failure(client({ requestTimeoutMs: 400, retryBudgetMs: 0 }).getOptions());
    clearInterval(timer);
    expect(err.kind).toBe('timeout');
  });

  it('an error body whose detail is not a string is still a CfsError', async () => {
    server.on('POST /v3/sessions', json(500, { detail: { toString: 1 } }));
    const err = await failure(client().createSession({ name: 'batcher-x', configuration_name: 'c' }));
    expect(err).toMatchObject({ kind: 'http', status: 500 });
  });

  it('paging that cycles between two after_ids is refused, not followed forever', async () => {
    server.on(
      'GET /v3/sessions',
      json(200, { sessions: [{ name: 'a' }], next: { after_id: 'a' } }),
      json(200, { sessions: [{ name: 'b' }], next: { after_id: 'b' } }),
      json(200, { sessions: [{ name: 'a' }], next: { after_id: 'a' } }),
    );
    const err = await failure(client().listAllSessions({}));
    expect(err.kind).toBe('invalid-response');
    expect(server.seen.length).toBe(3);
  });
});

describe('pure helpers', () => {
  it('chunkIds keeps order and respects the limit', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `id${i}`);
    const chunks = chunkIds(ids, 40);
    expect(chunks.join(',').split(',')).toEqual(ids);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(40);
  });
  it('nextToParams drops nulls and stringifies values', () => {
    expect(nextToParams({ a: null, b: true, c: 3, after_id: 'x' })).toEqual({ b: 'true', c: '3', after_id: 'x' });
  });
});
