/**
 * Whether a failed exchange may have sent its request is decided by the socket, not only by the error code: codes
 * such as EHOSTUNREACH can also end an established connection, and a POST on it must stay uncertain (never
 * repeated). 127.0.0.1 only; the error code is forced on an established socket to stand for such an ending.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import axios, { AxiosError } from 'axios';
import { CfsClient, CfsError } from '@cfs-batcher/shared';
import { Attempt, type RequestModule } from '../../shared/src/cfs/attempt';
import { failureCode } from '../../shared/src/cfs/outcome';

let server: http.Server;
let origin: string;
const serverSockets = new Set<Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  server.on('connection', (s) => serverSockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** One POST through axios's http adapter, watched by an Attempt as the CFS transport does; the failure's code and
 * whether the attempt saw its socket connect. */
async function attempt(agent: http.Agent, url = `${origin}/v3/sessions`, onSocket?: (s: Socket) => void) {
  const watch = new Attempt({ connectTimeoutMs: 5000, deadlineMs: 10_000, maxResponseBytes: 1 << 20 });
  const request: RequestModule['request'] = (options, onResponse) => {
    const req = http.request(options, onResponse);
    if (onSocket) req.once('socket', onSocket);
    return req;
  };
  try {
    await axios.post(
      url,
      {},
      { adapter: 'http', httpAgent: agent, signal: watch.signal, transport: watch.transport({ request }) },
    );
  } catch (err) {
    return Object.assign(err as AxiosError, { failure: { code: failureCode(err), connected: watch.connected } });
  } finally {
    watch.finish();
  }
  return undefined;
}

test('a refused connection: not connected (the request never left)', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const err = await attempt(new http.Agent(), `http://127.0.0.1:${port}/v3/sessions`);
  expect(err).toBeInstanceOf(AxiosError);
  expect(err!.failure.code).toBe('ECONNREFUSED');
  expect(err!.failure.connected).toBe(false);
});

test('EHOSTUNREACH on an established connection: connected (the request may have left)', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await attempt(agent); // warms the pool
  const err = await attempt(agent, undefined, (s) =>
    s.destroy(Object.assign(new Error('host unreachable'), { code: 'EHOSTUNREACH' })),
  );
  agent.destroy();
  expect(err).toBeInstanceOf(AxiosError);
  expect(err!.failure.code).toBe('EHOSTUNREACH');
  expect(err!.failure.connected).toBe(true);
});

test('the client does not repeat a POST that failed that way (the invariant it protects)', async () => {
  const client = new CfsClient({ baseUrl: `${origin}/v3`, retryBudgetMs: 5000 });
  await client.getOptions(); // a keep-alive socket in the pool
  const original = http.request;
  let posts = 0;
  const spy = jest.spyOn(http, 'request').mockImplementation((...args: Parameters<typeof http.request>) => {
    const req = original(...args);
    // the options come first from axios (request(options, onResponse)), second after a URL
    const options = args.find((a): a is http.RequestOptions => typeof a === 'object' && !(a instanceof URL));
    if (options?.method === 'POST') {
      posts++;
      req.once('socket', (s: Socket) =>
        s.destroy(Object.assign(new Error('host unreachable'), { code: 'EHOSTUNREACH' })),
      );
    }
    return req;
  });
  try {
    const err = await client.createSession({ name: 'batcher-x', configuration_name: 'c' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CfsError);
    expect((err as CfsError).notSent).toBe(false);
    expect(posts).toBe(1);
  } finally {
    spy.mockRestore();
  }
});
