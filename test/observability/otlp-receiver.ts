/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 for the trace tests: every export request kept as sent and as OTLP/JSON,
 * its spans flattened with their resource.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { readOtlpProtobuf } from './otlp-schema';

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
export interface Span {
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

export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;
export const STATUS_ERROR = 2;

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
export async function startReceiver(): Promise<{
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
