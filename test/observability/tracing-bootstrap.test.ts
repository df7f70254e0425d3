/**
 * The NodeSDK bootstrap (shared/src/tracing.ts) in a fresh node process with the built shared library: what it loads
 * with tracing off and on, that only traces reach the collector unless OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER ask
 * for more, that a misspelt exporter is a WARN line, that OTEL_SERVICE_NAME wins over the program's default, and
 * that a collector that never answers costs a DEBUG line and the 1.2 s shutdown bound, not an error.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { readOtlpProtobuf } from './otlp-schema';

const ROOT = path.resolve(__dirname, '..', '..');

interface Post {
  path: string;
  body: Buffer;
}

/** An OTLP/HTTP receiver on 127.0.0.1 that records each POST; `hang` accepts requests and never answers them. */
async function startCollector(mode: 'answer' | 'hang' = 'answer'): Promise<{
  url: string;
  posts: Post[];
  close: () => Promise<void>;
}> {
  const posts: Post[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: Buffer.concat(chunks) });
      if (mode === 'answer') res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

interface LogLine {
  level?: string;
  logger?: string;
  message?: string;
}

/**
 * Run `script` after the built barrel is loaded (as `shared`) in a child node with only `env` (plus PATH); resolves
 * with its JSON log lines and the other stdout lines. Asynchronous, so a collector in this process can answer.
 */
function runNode(script: string, env: Record<string, string>): Promise<{ logs: LogLine[]; out: string[] }> {
  const program = `const shared = require('./shared/dist/index.js'); shared.setLogLevel('DEBUG'); ${script}`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', program],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${err.message}\n${stdout}\n${stderr}`));
        const lines = stdout.split('\n').filter((l) => l.trim() !== '');
        const logs: LogLine[] = [];
        const out: string[] = [];
        for (const l of lines) {
          try {
            const parsed = JSON.parse(l) as LogLine;
            if (parsed.logger) logs.push(parsed);
            else out.push(l);
          } catch {
            out.push(l);
          }
        }
        resolve({ logs, out });
      },
    );
  });
}

/** A span, a counter and a log record through the APIs, then the bounded shutdown, then exit. */
const EMIT_AND_STOP = `
  const t = shared.startTracing({ serviceName: 'cfs-batcher', serviceVersion: '1.0.0' });
  require('@opentelemetry/api').trace.getTracer('probe').startSpan('probe.span').end();
  require('@opentelemetry/api').metrics.getMeter('probe').createCounter('probe_total').add(1);
  require('@opentelemetry/api-logs').logs.getLogger('probe').emit({ body: 'probe record' });
  t.shutdown().then(() => process.exit(0));
`;

const SDK_MODULES = `
  process.stdout.write(JSON.stringify(Object.keys(require.cache)
    .filter((k) => /@opentelemetry[\\\\/](sdk-|exporter-|instrumentation|resources)/.test(k))) + '\\n');
`;

function loadedModules(out: string[]): string[] {
  return JSON.parse(out[out.length - 1] ?? '[]') as string[];
}

describe('what loads', () => {
  test.each([
    ['nothing set', {}],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }],
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }],
  ])(
    'tracing off (%s): the barrel and startTracing load no SDK, exporter, instrumentation or resource package',
    async (_, env: Record<string, string>) => {
      const { out } = await runNode(`shared.startTracing({ serviceName: 'x' }); ${SDK_MODULES}`, env);
      expect(loadedModules(out)).toEqual([]);
    },
  );

  test('startTracing with an exporter configured loads NodeSDK and the HTTP instrumentation', async () => {
    const { out } = await runNode(`shared.startTracing({ serviceName: 'x' }); ${SDK_MODULES}`, {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', // no span is made, so nothing is sent there
    });
    const loaded = loadedModules(out);
    expect(loaded.some((k) => /[\\/]sdk-node[\\/]/.test(k))).toBe(true);
    expect(loaded.some((k) => /instrumentation-http/.test(k))).toBe(true);
  });
});

describe('the start-up line', () => {
  test.each([
    ['nothing set', {}, 'Tracing off: no trace exporter configured (set OTEL_EXPORTER_OTLP_ENDPOINT'],
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }, 'Tracing off: OTEL_SDK_DISABLED=true'],
    [
      'an endpoint',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' },
      'Tracing on: service x, traces go to http://127.0.0.1:9/v1/traces',
    ],
  ])(
    '%s: one INFO line, once the program starts, says where traces go or that they are off',
    async (_, env: Record<string, string>, text) => {
      const { logs } = await runNode(
        `shared.setLogLevel('INFO'); shared.logTracingStatus(shared.startTracing({ serviceName: 'x' }));`,
        env,
      );
      const lines = logs.filter((l) => l.logger === 'telemetry');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'INFO' });
      expect(lines[0]!.message).toContain(text);
    },
  );
});

describe('what reaches the collector', () => {
  test('only traces, as protobuf, with the program default service name', async () => {
    const collector = await startCollector();
    try {
      await runNode(EMIT_AND_STOP, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
      expect(collector.posts.map((p) => p.path)).toEqual(['/v1/traces']);
      const { body, problems } = readOtlpProtobuf(collector.posts[0]!.body);
      expect(problems).toEqual([]);
      expect(JSON.stringify(body)).toContain('"stringValue":"cfs-batcher"');
    } finally {
      await collector.close();
    }
  });

  test('OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER set are honoured by the SDK (so the check above can fail)', async () => {
    const collector = await startCollector();
    try {
      await runNode(EMIT_AND_STOP, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_LOGS_EXPORTER: 'otlp',
      });
      expect(new Set(collector.posts.map((p) => p.path))).toEqual(new Set(['/v1/traces', '/v1/metrics', '/v1/logs']));
    } finally {
      await collector.close();
    }
  });

  test('OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the program defaults', async () => {
    const collector = await startCollector();
    try {
      await runNode(EMIT_AND_STOP, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'renamed',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      });
      const text = JSON.stringify(readOtlpProtobuf(collector.posts[0]!.body).body);
      expect(text).toContain('"stringValue":"renamed"');
      expect(text).not.toContain('"stringValue":"cfs-batcher"');
      expect(text).toContain('"stringValue":"test"');
    } finally {
      await collector.close();
    }
  });
});

describe('what is logged', () => {
  const warnings = (logs: LogLine[]): string[] =>
    logs.filter((l) => /^WARN/.test(l.level ?? '')).map((l) => l.message ?? '');

  test('a misspelt exporter name is a WARN line naming it', async () => {
    const { logs } = await runNode(EMIT_AND_STOP, {
      OTEL_TRACES_EXPORTER: 'otpl',
      OTEL_METRICS_EXPORTER: 'prometeus',
    });
    const text = warnings(logs).join('\n');
    expect(text).toMatch(/OTEL_TRACES_EXPORTER value: otpl/);
    expect(text).toMatch(/OTEL_METRICS_EXPORTER value: "prometeus"/);
  });

  test('a collector that never answers: no warning or error, a DEBUG line, and shutdown gives up after 1.2 s', async () => {
    const collector = await startCollector('hang');
    try {
      const { logs } = await runNode(EMIT_AND_STOP, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
      expect(logs.filter((l) => /^(WARN|ERROR)/.test(l.level ?? '')).map((l) => l.message)).toEqual([]);
      expect(logs.map((l) => l.message)).toContain(
        'Tracing shutdown did not finish within 1200 ms; pending spans dropped',
      );
    } finally {
      await collector.close();
    }
  });

  test('a collector that refuses connections: the failed export is a DEBUG line, not a warning', async () => {
    const collector = await startCollector();
    const url = collector.url;
    await collector.close(); // nothing listens there now
    // the span is exported at once (OTEL_BSP_SCHEDULE_DELAY), the child stops once the failure is logged
    const waitForFailure = `
      const t = shared.startTracing({ serviceName: 'cfs-batcher' });
      // the exporter's retry timers do not hold the process: this one does, until the failure is logged (bounded)
      setTimeout(() => shared.exitAfterLogs(3), 40000);
      shared.addLogSink((line) => { if (line.includes('Trace export failed')) t.shutdown().then(() => shared.exitAfterLogs(0)); });
      require('@opentelemetry/api').trace.getTracer('probe').startSpan('probe.span').end();
    `;
    const { logs } = await runNode(waitForFailure, { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_BSP_SCHEDULE_DELAY: '10' });
    expect(logs.filter((l) => /^(WARN|ERROR)/.test(l.level ?? '')).map((l) => l.message)).toEqual([]);
    expect(logs.some((l) => l.level === 'DEBUG' && /^Trace export failed/.test(l.message ?? ''))).toBe(true);
  });
});
