/**
 * A minimal OTLP/HTTP trace receiver on 127.0.0.1 for the image check: answers every POST /v1/traces with 200 `{}`
 * and counts spans per `service.name`. The images export OTLP/JSON (exporter-trace-otlp-http), so spans reaching
 * it show the exporter loads in the image, and spans flushed at SIGTERM show the shutdown flush fits the grace.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: { spans?: unknown[] }[];
  }[];
}

export interface Collector {
  endpoint: string;
  spans: Map<string, number>;
  close(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  const spans = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJson;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? '?';
          const n = (rs.scopeSpans ?? []).reduce((sum, ss) => sum + (ss.spans?.length ?? 0), 0);
          spans.set(service, (spans.get(service) ?? 0) + n);
        }
      } catch {
        spans.set('undecodable', (spans.get('undecodable') ?? 0) + 1);
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
