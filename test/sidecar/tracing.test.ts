/**
 * Process level: the built sidecar with tracing on exports its /status request as a server span and a route-handler
 * span, and no `middleware - <anonymous>` spans (the express instrumentation ignores middleware layers).
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT, killAll, spawnNode } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';

const SIDECAR = 'sidecar-health/dist/main.js';
const built = existsSync(path.join(REPO_ROOT, SIDECAR));
const tmp = makeTempDir('sidecar-tracing-');

/** Span names from OTLP/JSON posts to /v1/traces (the sidecar runs with OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
async function startReceiver(): Promise<{ url: string; names: string[]; close: () => Promise<void> }> {
  const names: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const doc = JSON.parse(body || '{}') as { resourceSpans?: { scopeSpans?: { spans?: { name: string }[] }[] }[] };
      for (const rs of doc.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) names.push(s.name);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, names, close: () => new Promise((r) => server.close(() => r())) };
}

function get(port: number, p: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

afterAll(async () => {
  await killAll();
  tmp.cleanup();
});

(built ? test : test.skip)('the sidecar traces its /status route without middleware spans', async () => {
  const receiver = await startReceiver();
  try {
    const p = spawnNode({
      name: 'sidecar',
      script: SIDECAR,
      env: {
        OTEL_SDK_DISABLED: 'false',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', // this receiver reads JSON; NodeSDK's default is protobuf
        OTEL_BSP_SCHEDULE_DELAY: '50',
        HEARTBEAT_PATH: path.join(tmp.dir, 'heartbeat.json'),
        HEALTH_HOST: '127.0.0.1',
        HEALTH_PORT: '0',
        SIDECAR_CFS_POLL_SECONDS: '0',
      },
    });
    const listening = await p.waitForLine(/Health sidecar listening on 127\.0\.0\.1:\d+/, 20_000);
    const port = Number(/:(\d+)$/.exec(String(listening.json?.message))?.[1]);
    expect(await get(port, '/status')).toBe(200);
    await waitFor(() => receiver.names.some((n) => /status/.test(n) && !/middleware/.test(n)), {
      timeoutMs: 20_000,
      what: 'the /status spans',
    });
    await p.stop();
    expect(receiver.names).toEqual(expect.arrayContaining(['GET /status', 'request handler']));
    expect(receiver.names.filter((n) => n.startsWith('middleware'))).toEqual([]);
  } finally {
    await receiver.close();
  }
});
