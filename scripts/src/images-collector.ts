/**
 * A minimal OTLP/HTTP trace receiver on 127.0.0.1 for the image check: answers every POST /v1/traces with 200 and
 * counts spans per `service.name`. The images export what NodeSDK sends by default (protobuf; read with the OTLP
 * schema of the `otlp-protos` devDependency) or OTLP/JSON when OTEL_EXPORTER_OTLP_PROTOCOL=http/json, so spans
 * reaching it show the exporter loads in the image, and spans flushed at SIGTERM show the shutdown flush fits the
 * grace.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: { spans?: unknown[] }[];
  }[];
}

interface TraceRequestType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): OtlpJson;
}

/** A protobuf ExportTraceServiceRequest as the same shape as OTLP/JSON (only the fields counted here). */
function decodeProtobuf(bytes: Buffer): OtlpJson {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- generated protobufjs module without types
  const root = require('otlp-protos/build/src/generated/root') as {
    opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: TraceRequestType } } } } };
  };
  const T = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
  return T.toObject(T.decode(bytes), { arrays: true });
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
        const raw = Buffer.concat(chunks);
        const body = /protobuf/.test(req.headers['content-type'] ?? '')
          ? decodeProtobuf(raw)
          : (JSON.parse(raw.toString('utf8')) as OtlpJson);
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? '?';
          const n = (rs.scopeSpans ?? []).reduce((sum, ss) => sum + (ss.spans?.length ?? 0), 0);
          spans.set(service, (spans.get(service) ?? 0) + n);
        }
      } catch {
        spans.set('undecodable', (spans.get('undecodable') ?? 0) + 1);
      }
      const json = /json/.test(req.headers['content-type'] ?? '');
      res.writeHead(200, { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
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
