/**
 * Batcher traces end to end: the built batcher (`node batcher/dist/main.js`, auto-instrumentation only works outside
 * jest) runs real cycles against the in-process simulator and exports OTLP/HTTP to an in-process receiver on
 * 127.0.0.1, as NodeSDK sends it by default (protobuf). Checks every request against the official OTLP schema, span
 * names, parentage, attributes, the W3C traceparent CFS receives, a CFS 404 as an error span, the untraced /metrics
 * scrape, and `promtool check metrics` on the live /metrics.
 * Needs `npm run build` first (npm test does it).
 */
import http from 'node:http';
import { freePort } from '../helpers/ports';
import { spawnNode, type Proc } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { describeWithTool } from '../helpers/requires';
import { SPAN_KIND_CLIENT, STATUS_ERROR, startReceiver, type Span } from './otlp-receiver';
import { otlpTraceProblems, readOtlpProtobuf } from './otlp-schema';
import { checkMetrics } from './promql';
import { batcherEnv, startCfs, tracedProgramsLifecycle } from './traced-programs';

tracedProgramsLifecycle();

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
