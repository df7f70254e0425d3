/**
 * Every failed CFS call is said at its first failure, once per call, at WARNING, with the method, the route, the
 * answer (a status, a timeout, an unreachable CFS) and how long the call will keep trying; a call that had failed says
 * how it ended (answered after retries, or gave up). The call's final error is as it always was. Against a closed
 * port or a server of the test's own on 127.0.0.1; every wait is an event (a log line, an attempt's report, the
 * call's end).
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

const transport = (l: Line) => l.logger === 'cfs.transport';
const retrying = (l: Line) => transport(l) && /: CFS .*; retrying for up to /.test(l.message);
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
    message: `GET /v3/options: CFS unreachable (ECONNREFUSED); retrying for up to 30 s`,
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
    `POST /v3/sessions: CFS unreachable (ECONNREFUSED); retrying for up to 1.5 s`,
  ]);
  expect(lines.filter(transport).at(-1)?.message).toMatch(
    /^POST \/v3\/sessions: giving up after \d+ attempts over [\d.]+ s \(retry budget 1\.5 s spent\); last answer: ECONNREFUSED$/,
  );
  await failure(c.getOptions()); // the next call says it again
  expect(lines.filter(retrying)).toHaveLength(2);
});

it('a POST whose connection was reset after it was sent: said once, not retried, and why', async () => {
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
    expect(lines.filter(transport).map((l) => l.message)).toEqual([
      'POST /v3/sessions: CFS unreachable (ECONNRESET); not retried (a POST that may have reached CFS is never repeated)',
    ]);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server answering `statuses` in turn (the last one for ever after). */
async function answering(statuses: number[]): Promise<{ url: string; close: () => Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    const status = statuses[Math.min(n++, statuses.length - 1)]!;
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(status < 300 ? '{}' : '{"detail":"no"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: open } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${open}/v3`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

it('a 503 is said at the first failure with its status; the call that then answers says so', async () => {
  const s = await answering([503, 503, 200]);
  try {
    const c = new CfsClient({ baseUrl: s.url, retryBudgetMs: 10_000 });
    await c.getOptions();
    const said = lines.filter(transport);
    expect(said.map((l) => [l.level, l.message.replace(/over [\d.]+ s/, 'over T s')])).toEqual([
      ['WARNING', 'GET /v3/options: CFS answered 503; retrying for up to 10 s'],
      ['INFO', 'GET /v3/options: CFS answered after 3 attempts over T s (last failure: 503)'],
    ]);
    expect(said[0]).toMatchObject({ method: 'GET', route: '/v3/options', answer: '503' });
  } finally {
    await s.close();
  }
});

it('a 404 is said once per call, at INFO, as final; the caller gets its error as before', async () => {
  const s = await answering([404]);
  try {
    const c = new CfsClient({ baseUrl: s.url, retryBudgetMs: 10_000 });
    const err = await failure(c.getOptions());
    expect(err).toMatchObject({ kind: 'http', status: 404 });
    expect(lines.filter(transport).map((l) => [l.level, l.message])).toEqual([
      ['INFO', 'GET /v3/options: CFS answered 404; not retried (an answer below 500 is final)'],
    ]);
  } finally {
    await s.close();
  }
});

it('a caller that reports failures itself turns the lines off; the call states still reach it', async () => {
  const s = await answering([503, 200]);
  try {
    const states: string[] = [];
    const c = new CfsClient({
      baseUrl: s.url,
      retryBudgetMs: 10_000,
      logFailures: false,
      onCallState: (st) => states.push(`${st.phase} ${st.method} ${st.route} ${st.answer} ${st.attempts}`),
    });
    await c.getOptions();
    expect(lines.filter(transport)).toEqual([]);
    expect(states).toEqual(['retrying GET /v3/options 503 1', 'ended GET /v3/options 503 1']);
  } finally {
    await s.close();
  }
});
