/**
 * Traces end to end: the built batcher (`node batcher/dist/main.js`, auto-instrumentation only works outside jest)
 * runs real cycles against the in-process simulator and exports OTLP/HTTP to an in-process receiver on 127.0.0.1, as
 * NodeSDK sends it by default (protobuf); the sidecar is run with OTEL_EXPORTER_OTLP_PROTOCOL=http/json. Checks
 * every request of both against the official OTLP schema, span names, parentage, attributes, the W3C traceparent CFS
 * receives, a CFS 404 as an error span, the untraced /metrics scrape, `promtool check metrics` on the live /metrics,
 * that a dead collector changes nothing, and that the sidecar's traced requests carry no Express `middleware - ...`
 * spans (noise in Jaeger).
 * Needs `npm run build` first (npm test does it).
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { setLogSilent } from '@cfs-batcher/shared';
import { request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { killAll, spawnNode, type Proc } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { describeWithTool } from '../helpers/requires';
import { otlpTraceProblems, readOtlpProtobuf } from './otlp-schema';
import { REPO, checkMetrics } from './promql';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
  events?: { name: string }[];
}
interface Span {
  traceId: string;
  spanId: string;
  parent: string;
  name: string;
  kind: number;
  attrs: Record<string, string | number | boolean | undefined>;
  statusCode: number;
  events: string[];
  resource: Record<string, string | number | boolean | undefined>;
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;
const BATCHER_MAIN = path.join(REPO, 'batcher', 'dist', 'main.js');

function value(v: OtlpValue): string | number | boolean | undefined {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.doubleValue ?? v.boolValue;
}
function attrMap(list: { key: string; value: OtlpValue }[] | undefined): Span['attrs'] {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

/**
 * An OTLP/HTTP receiver (protobuf or JSON): POST /v1/traces, spans flattened with their resource. A protobuf body is
 * read with the official schema (its problems in `protobufProblems`) and kept, like a JSON one, as OTLP/JSON.
 */
async function startReceiver(): Promise<{
  url: string;
  spans: Span[];
  posts: string[];
  contentTypes: string[];
  bodies: unknown[];
  protobufBodies: Buffer[];
  protobufProblems: string[];
  close: () => Promise<void>;
}> {
  const spans: Span[] = [];
  const posts: string[] = [];
  const contentTypes: string[] = [];
  const bodies: unknown[] = [];
  const protobufBodies: Buffer[] = [];
  const protobufProblems: string[] = [];
  const app = express();
  app.use(express.json({ limit: '20mb' }));
  app.use(express.raw({ type: 'application/x-protobuf', limit: '20mb' }));
  app.post(/.*/, (req, res) => {
    posts.push(req.path);
    contentTypes.push(String(req.headers['content-type']));
    let parsed: unknown = req.body;
    if (Buffer.isBuffer(req.body)) {
      const read = readOtlpProtobuf(req.body);
      protobufProblems.push(...read.problems.map((p) => `request ${posts.length - 1}: ${p}`));
      parsed = read.body;
      if (protobufBodies.length < 1000) protobufBodies.push(req.body);
    }
    if (bodies.length < 1000) bodies.push(parsed);
    const body = parsed as {
      resourceSpans?: {
        resource?: { attributes?: { key: string; value: OtlpValue }[] };
        scopeSpans?: { spans?: OtlpSpan[] }[];
      }[];
    };
    for (const rs of body.resourceSpans ?? []) {
      const resource = attrMap(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parent: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attrs: attrMap(s.attributes),
            statusCode: s.status?.code ?? 0,
            events: (s.events ?? []).map((e) => e.name),
            resource,
          });
        }
      }
    }
    res.json({});
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    posts,
    contentTypes,
    bodies,
    protobufBodies,
    protobufProblems,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The simulator behind a front server that records each request's traceparent header. */
async function startCfs(): Promise<{
  sim: Simulator;
  url: string;
  seen: { method: string; url: string; traceparent?: string }[];
  close: () => Promise<void>;
}> {
  const scenario = JSON.parse(readFileSync(path.join(REPO, 'cfs-sim', 'scenarios', 'demo.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  scenario.options = { ...(scenario.options as object), batcher_check_interval: 1, batch_window: 1 };
  const sim = createSimulator({ scenario: scenario as never });
  await sim.listen(0, '127.0.0.1'); // starts the operator; requests arrive through the front server below
  const seen: { method: string; url: string; traceparent?: string }[] = [];
  const front = http.createServer((req, res) => {
    if (seen.length < 10_000)
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        traceparent: req.headers.traceparent as string | undefined,
      });
    sim.app(req, res);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  const port = (front.address() as AddressInfo).port;
  return {
    sim,
    url: `http://127.0.0.1:${port}/v3`,
    seen,
    close: async () => {
      front.closeAllConnections();
      await new Promise<void>((r) => front.close(() => r()));
      await sim.close();
    },
  };
}

function batcherEnv(
  cfsUrl: string,
  otlp: string,
  heartbeatDir: string,
  metricsPort: number,
): Record<string, string | undefined> {
  return {
    OTEL_SDK_DISABLED: undefined, // the e2e helpers turn tracing off by default
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    CFS_API_URL: cfsUrl,
    CFS_RETRY_BUDGET_MS: '2000',
    HEARTBEAT_PATH: path.join(heartbeatDir, 'heartbeat.json'),
    METRICS_PORT: String(metricsPort),
    POD_NAME: 'cfs-batcher-e2e-0',
    POD_NAMESPACE: 'services',
    CONTAINER_NAME: 'cfs-batcher',
  };
}

async function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/metrics', timeout: 5000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

beforeAll(() => {
  setLogSilent(true); // the in-process simulator's own log lines
  if (!existsSync(BATCHER_MAIN)) throw new Error(`${BATCHER_MAIN} is missing: run npm run build first`);
});
afterAll(async () => {
  await killAll();
  setLogSilent(false);
});

describe('batcher traces', () => {
  const tmp = makeTempDir('traces');
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let cfs: Awaited<ReturnType<typeof startCfs>>;
  let batcher: Proc | undefined;
  let metricsText = '';

  beforeAll(async () => {
    receiver = await startReceiver();
    cfs = await startCfs();
    // the first options reads fail like a deleted resource: they must show up as error spans with URL and status,
    // the start-up probe's (batcher.cfs_url_check) and the loop's (batcher.options), whichever comes first
    cfs.sim.faults.add({ match: 'GET /v3/options', action: { type: 'status', status: 404 }, scope: { times: 2 } });
    const metricsPort = await freePort();
    batcher = spawnNode({
      name: 'batcher',
      script: 'batcher/dist/main.js',
      env: batcherEnv(cfs.url, receiver.url, tmp.dir, metricsPort),
    });
    await waitFor(() => cfs.sim.history.all().length > 0 || !batcher!.alive, {
      timeoutMs: 40_000,
      what: 'a session created by the batcher',
    });
    if (!batcher.alive) throw new Error(`batcher exited early:\n${batcher.tail()}`);
    metricsText = await scrape(metricsPort);
    const exit = await batcher.stop(10_000);
    expect(exit.code).toBe(0);
    // shutdown flushes: everything the batcher traced has arrived once it exited
    await waitFor(() => receiver.spans.some((s) => s.name === 'batcher.session.create'), {
      timeoutMs: 5000,
      what: 'the session span',
    });
  }, 90_000);

  afterAll(async () => {
    await batcher?.stop(3000);
    await cfs?.close();
    await receiver?.close();
    tmp.cleanup();
  });

  const named = (name: string): Span[] => receiver.spans.filter((s) => s.name === name);
  const byId = (id: string): Span | undefined => receiver.spans.find((s) => s.spanId === id);

  test('every export request is protobuf (the SDK default) and valid against the official OTLP schema', () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/x-protobuf']));
    expect(receiver.protobufProblems).toEqual([]);
    expect(receiver.bodies.flatMap((b, i) => otlpTraceProblems(b).map((p) => `request ${i}: ${p}`))).toEqual([]);
  });

  test('the protobuf check rejects a field the schema does not have and a cut-off request', () => {
    const sent = receiver.protobufBodies[0]!;
    const unknownField = Buffer.concat([sent, Buffer.from([0x98, 0x06, 0x01])]); // field 99, varint 1
    expect(readOtlpProtobuf(unknownField).problems.join('\n')).toMatch(/gives \d+ bytes, not the \d+ sent/);
    expect(readOtlpProtobuf(sent.subarray(0, sent.length - 3)).problems.join('\n')).toMatch(/decode/);
  });

  test('the schema check rejects a misspelled field, a string enum and a short span id', () => {
    const body = structuredClone(receiver.bodies[0]) as {
      resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[];
    };
    const span = body.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    span.spanID = span.spanId;
    span.kind = 'SPAN_KIND_SERVER';
    span.spanId = 'abcd';
    const problems = otlpTraceProblems(body).join('\n');
    expect(problems).toMatch(/spanID: not a field/);
    expect(problems).toMatch(/kind/);
    expect(problems).toMatch(/spanId: "abcd" is not 8 bytes/);
  });

  test('only traces are exported (no OTLP metrics or logs), with the service and pod resource', () => {
    expect(new Set(receiver.posts)).toEqual(new Set(['/v1/traces']));
    const r = named('batcher.cycle')[0]?.resource;
    expect(r).toMatchObject({
      'service.name': 'cfs-batcher',
      'k8s.pod.name': 'cfs-batcher-e2e-0',
      'k8s.namespace.name': 'services',
      'k8s.container.name': 'cfs-batcher',
    });
    expect(typeof r?.['service.version']).toBe('string');
  });

  test('each cycle is a root span with phase children', () => {
    const cycles = named('batcher.cycle');
    expect(cycles.length).toBeGreaterThan(0);
    for (const c of cycles) expect(c.parent).toBe('');
    const cycleIds = new Set(cycles.map((c) => c.spanId));
    for (const phase of ['batcher.options', 'batcher.check_sessions', 'batcher.collect', 'batcher.send']) {
      const spans = named(phase);
      expect([phase, spans.length > 0]).toEqual([phase, true]);
      for (const s of spans) expect([phase, cycleIds.has(s.parent)]).toEqual([phase, true]);
    }
  });

  test('a created session has its span under the send phase, with attributes, and its POST carries traceparent to CFS', () => {
    const created = new Map(cfs.sim.history.all().map((h) => [h.name, h]));
    const sessionSpans = named('batcher.session.create').filter((s) =>
      created.has(String(s.attrs['cfs.session.name'])),
    );
    expect(sessionSpans.length).toBeGreaterThan(0);
    const s = sessionSpans[0]!;
    const session = created.get(String(s.attrs['cfs.session.name']))!;
    expect(byId(s.parent)?.name).toBe('batcher.send');
    expect(s.attrs['cfs.configuration.name']).toBe(session.configuration);
    expect(s.attrs['cfs.batch.size']).toBe(session.hosts.length);
    expect(s.attrs['cfs.session.limit']).toBe(session.configuration_limit);
    const post = receiver.spans.find((x) => x.parent === s.spanId && x.kind === SPAN_KIND_CLIENT);
    expect(post?.attrs['http.request.method']).toBe('POST');
    expect(String(post?.attrs['url.full'])).toMatch(/\/v3\/sessions$/);
    const sent = cfs.seen.filter((r) => r.method === 'POST' && r.url.startsWith('/v3/sessions'));
    expect(sent.map((r) => r.traceparent)).toContain(`00-${post!.traceId}-${post!.spanId}-01`);
  });

  test('every CFS request made inside a cycle is a client span of that trace', () => {
    const clients = receiver.spans.filter((s) => s.kind === SPAN_KIND_CLIENT);
    expect(clients.length).toBeGreaterThan(3);
    const traced = cfs.seen.filter((r) => r.traceparent).length;
    expect(traced).toBeGreaterThan(0);
    for (const c of clients) expect(String(c.attrs['url.full'])).toContain('/v3/');
  });

  test('the CFS 404 is an error client span with URL and status, under an error phase span', () => {
    const failed = receiver.spans.find(
      (s) =>
        s.kind === SPAN_KIND_CLIENT &&
        s.attrs['http.response.status_code'] === 404 &&
        byId(s.parent)?.name === 'batcher.options',
    );
    expect(failed).toBeDefined();
    expect(failed!.statusCode).toBe(STATUS_ERROR);
    expect(String(failed!.attrs['url.full'])).toMatch(/\/v3\/options/);
    const phase = byId(failed!.parent);
    expect(phase?.name).toBe('batcher.options');
    expect(phase?.statusCode).toBe(STATUS_ERROR);
    expect(phase?.events).toContain('exception');
  });

  test('the CFS_API_URL probe at start is a root span holding its one GET /v3/options', () => {
    const checks = named('batcher.cfs_url_check');
    expect(checks).toHaveLength(1);
    expect(checks[0]!.parent).toBe('');
    const gets = receiver.spans.filter((s) => s.kind === SPAN_KIND_CLIENT && s.parent === checks[0]!.spanId);
    expect(gets.map((s) => s.attrs['http.response.status_code'])).toEqual([404]);
    expect(String(gets[0]!.attrs['url.full'])).toMatch(/\/v3\/options$/);
  });

  test('the /metrics scrape is not traced', () => {
    expect(
      receiver.spans.filter((s) => String(s.attrs['url.path'] ?? s.attrs['http.route'] ?? '') === '/metrics'),
    ).toEqual([]);
    expect(metricsText).toContain('cfs_batcher_cycles_total');
    expect(metricsText).toMatch(/cfs_batcher_cfs_requests_total\{[^}]*status="404"/);
  });

  describeWithTool('promtool', 'the live /metrics', () => {
    test('passes promtool check metrics', () => {
      expect(checkMetrics(metricsText).problems).toEqual([]);
    });
  });
});

describe('sidecar traces', () => {
  const tmp = makeTempDir('traces-sidecar');
  afterAll(() => tmp.cleanup());

  test('a traced request is a server span with no Express middleware spans under it', async () => {
    const receiver = await startReceiver();
    const cfs = await startCfs();
    try {
      const port = await freePort();
      const sidecar = spawnNode({
        name: 'sidecar-traced',
        script: 'sidecar-health/dist/main.js',
        env: {
          OTEL_SDK_DISABLED: undefined,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', // the other protocol NodeSDK offers over HTTP, checked here
          OTEL_BSP_SCHEDULE_DELAY: '200',
          HEALTH_PORT: String(port),
          HEALTH_HOST: '127.0.0.1',
          HEARTBEAT_PATH: path.join(tmp.dir, 'heartbeat.json'),
          CFS_API_URL: cfs.url,
        },
      });
      // /status and an unknown path are traced (the probe paths are not); each runs Express's middleware stack.
      await waitFor(async () => (await request(`http://127.0.0.1:${port}/status`)).status > 0 || !sidecar.alive, {
        timeoutMs: 20_000,
        what: 'the sidecar answering',
      });
      for (const p of ['/status', '/no-such-path', '/status']) await request(`http://127.0.0.1:${port}${p}`);
      expect((await sidecar.stop(10_000)).code).toBe(0); // shutdown flushes the spans
      const spans = receiver.spans.filter((x) => x.resource['service.name'] === 'cfs-batcher-health');
      expect(spans.filter((x) => x.kind === SPAN_KIND_SERVER).length).toBeGreaterThan(0);
      expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/json']));
      expect(receiver.bodies.flatMap((b) => otlpTraceProblems(b))).toEqual([]);
      expect(spans.filter((x) => /^middleware - /.test(x.name)).map((x) => x.name)).toEqual([]);
    } finally {
      await cfs.close();
      await receiver.close();
    }
  }, 60_000);
});

describe('an unreachable collector', () => {
  const tmp = makeTempDir('traces-dead');
  afterAll(() => tmp.cleanup());

  test('does not stop the batcher creating sessions, and SIGTERM still exits cleanly', async () => {
    const cfs = await startCfs();
    try {
      const dead = await freePort(); // nothing listens there
      const batcher = spawnNode({
        name: 'batcher-dead-otlp',
        script: 'batcher/dist/main.js',
        env: batcherEnv(cfs.url, `http://127.0.0.1:${dead}`, tmp.dir, await freePort()),
      });
      await waitFor(() => cfs.sim.history.all().length > 0 || !batcher.alive, {
        timeoutMs: 40_000,
        what: 'a session with no collector',
      });
      expect([batcher.alive, batcher.alive ? '' : batcher.tail()]).toEqual([true, '']);
      const exit = await batcher.stop(10_000);
      expect(exit.code).toBe(0);
      const errors = batcher.lines.filter((l) => l.json?.level === 'ERROR');
      expect(errors.map((l) => l.text)).toEqual([]);
    } finally {
      await cfs.close();
    }
  }, 60_000);
});
