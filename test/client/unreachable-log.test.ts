/**
 * An unreachable CFS is said at the first failure of a call, once per call, at WARNING, with how long the call will
 * keep trying; the call's final error is as it always was. Against a closed port on 127.0.0.1; every wait is an event
 * (a log line, an attempt's report, the call's end).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CFS_CLIENT_DEFAULTS, CfsClient, addLogSink, setLogSilent, type RequestInfo } from '@cfs-batcher/shared';
import { failure } from '../helpers/cfs-failure';

interface Line {
  level: string;
  logger: string;
  message: string;
}

let lines: Line[];
let listeners: ((l: Line) => void)[];
let stopLogs: () => void;
let port: number;

const retrying = (l: Line) => l.logger === 'cfs.transport' && /^CFS unreachable at /.test(l.message);
/** Resolves with the first line that `matches`, now or later. */
const nextLine = (matches: (l: Line) => boolean) =>
  new Promise<Line>((resolve) => {
    const seen = lines.find(matches);
    if (seen) return resolve(seen);
    listeners.push((l) => matches(l) && resolve(l));
  });

beforeAll(() => setLogSilent(true));
afterAll(() => setLogSilent(false));
beforeEach(async () => {
  lines = [];
  listeners = [];
  stopLogs = addLogSink((line) => {
    const l = JSON.parse(line) as Line;
    lines.push(l);
    for (const f of listeners) f(l);
  });
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
});
afterEach(() => stopLogs());

it('with the shipped budget, the WARNING comes at the first failure, while the call still has 30 s to go', async () => {
  expect(CFS_CLIENT_DEFAULTS.retryBudgetMs).toBe(30_000);
  const requests: RequestInfo[] = [];
  const ac = new AbortController();
  const c = new CfsClient({ baseUrl: `http://127.0.0.1:${port}/v3`, onRequest: (r) => requests.push(r) });
  let settled = false;
  const call = c.getOptions({ signal: ac.signal }).finally(() => (settled = true));
  const line = await nextLine(retrying);
  expect(line).toMatchObject({
    level: 'WARNING',
    message: `CFS unreachable at http://127.0.0.1:${port}/v3/options: ECONNREFUSED; retrying for up to 30 s`,
  });
  expect(settled).toBe(false); // the call is still retrying: the line came before its end
  expect(requests.map((r) => r.status)).toEqual(['unreachable']); // said after the first failure, not the seventh
  ac.abort();
  expect(await failure(call)).toMatchObject({ kind: 'aborted' });
});

it('is said once per call, before the second attempt; the final error is unchanged', async () => {
  const requests: RequestInfo[] = [];
  let linesAtSecondAttempt = -1;
  const c = new CfsClient({
    baseUrl: `http://127.0.0.1:${port}/v3`,
    retryBudgetMs: 1500,
    onRequest: (r) => {
      requests.push(r);
      if (requests.length === 2) linesAtSecondAttempt = lines.filter(retrying).length;
    },
  });
  const err = await failure(c.createSession({ name: 'batcher-x', configuration_name: 'c' }));
  expect(err).toMatchObject({ kind: 'unreachable', notSent: true, method: 'POST' });
  expect(err.message).toBe(`cannot reach CFS at http://127.0.0.1:${port}/v3/sessions: ECONNREFUSED`);
  expect(requests.length).toBeGreaterThan(1);
  expect(linesAtSecondAttempt).toBe(1);
  expect(lines.filter(retrying).map((l) => l.message)).toEqual([
    `CFS unreachable at http://127.0.0.1:${port}/v3/sessions: ECONNREFUSED; retrying for up to 1.5 s`,
  ]);
  await failure(c.getOptions()); // the next call says it again
  expect(lines.filter(retrying)).toHaveLength(2);
});

it('is not said when nothing will be retried: a POST whose connection was reset after it was sent', async () => {
  const server = http.createServer((req) =>
    req.on('data', () => undefined).on('end', () => req.socket.resetAndDestroy()),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port: open } = server.address() as AddressInfo;
    const c = new CfsClient({ baseUrl: `http://127.0.0.1:${open}/v3`, retryBudgetMs: 5000 });
    const err = await failure(c.createSession({ name: 'batcher-x', configuration_name: 'c' }));
    expect(err).toMatchObject({ kind: 'unreachable', notSent: false });
    expect(lines.filter(retrying)).toEqual([]);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
