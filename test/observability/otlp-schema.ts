/**
 * OTLP/HTTP bodies checked against the official OTLP protobuf schema: the protobufjs module generated from
 * opentelemetry-proto that @opentelemetry/otlp-transformer 0.216 ships (the last release that does,
 * installed under the alias otlp-protos: OTLP_PROTOS_MODULE below).
 * - protobuf (`http/protobuf`, the SDK's default): decoded with the schema and verified, and encoding the decoded
 *   message again must give back the bytes sent (a field the schema does not know, or of the wrong wire type, would
 *   not survive);
 * - OTLP/JSON (`http/json`): read into ExportTraceServiceRequest, verified, encoded to the wire format and decoded
 *   again; every field sent must survive with its value (an unknown or mistyped field does not). OTLP/JSON's own
 *   rules are applied first: trace and span ids are hex (16 and 8 bytes), enums are integers, 64-bit integers may be
 *   strings.
 */

/** Where the generated schema module is found: a devDependency alias of the last otlp-transformer that ships it. */
export const OTLP_PROTOS_MODULE = 'otlp-protos/build/src/generated/root';
export const OTLP_PROTOS_DEPENDENCY = '"otlp-protos": "npm:@opentelemetry/otlp-transformer@0.216.0"';

interface MessageType {
  fromObject(o: unknown): unknown;
  verify(m: unknown): string | null;
  encode(m: unknown): { finish(): Uint8Array };
  decode(b: Uint8Array): unknown;
  toObject(m: unknown, o: Record<string, unknown>): Record<string, unknown>;
}

function requestType(): MessageType {
  let root: { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } } };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    root = require(OTLP_PROTOS_MODULE);
  } catch (err) {
    throw new Error(
      `the OTLP schema module ${OTLP_PROTOS_MODULE} is not installed (${(err as Error).message}); add devDependency ${OTLP_PROTOS_DEPENDENCY}`,
      { cause: err },
    );
  }
  return root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
}

const ID_BYTES: Record<string, number> = { traceId: 16, spanId: 8, parentSpanId: 8 };
const TO_OBJECT = { longs: String, enums: Number, bytes: String, defaults: true, arrays: true };

/** OTLP/JSON -> protobuf JSON mapping (hex ids to base64); id problems are reported, not thrown. */
function toProtoJson(v: unknown, path: string, problems: string[]): unknown {
  if (Array.isArray(v)) return v.map((x, i) => toProtoJson(x, `${path}[${i}]`, problems));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const bytes = ID_BYTES[k];
    if (bytes !== undefined && typeof x === 'string') {
      if (x === '' && k === 'parentSpanId') continue;
      if (!new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(x))
        problems.push(`${path}.${k}: "${x}" is not ${bytes} bytes of lower-case hex`);
      out[k] = Buffer.from(x, 'hex').toString('base64');
    } else out[k] = toProtoJson(x, `${path}.${k}`, problems);
  }
  return out;
}

/** Every field of `sent` must be in `read` with the same value (numbers and 64-bit strings compared as text). */
function compare(sent: unknown, read: unknown, path: string, problems: string[]): void {
  if (problems.length > 50) return;
  if (Array.isArray(sent)) {
    if (!Array.isArray(read) || read.length !== sent.length)
      return void problems.push(`${path}: array of ${sent.length} read as ${JSON.stringify(read)?.slice(0, 80)}`);
    sent.forEach((x, i) => compare(x, read[i], `${path}[${i}]`, problems));
  } else if (sent !== null && typeof sent === 'object') {
    if (read === null || typeof read !== 'object') return void problems.push(`${path}: object read as ${String(read)}`);
    for (const [k, x] of Object.entries(sent)) {
      if (!(k in read)) problems.push(`${path}.${k}: not a field of the OTLP schema`);
      else compare(x, (read as Record<string, unknown>)[k], `${path}.${k}`, problems);
    }
  } else if (String(sent) !== String(read))
    problems.push(`${path}: sent ${JSON.stringify(sent)}, the schema reads ${JSON.stringify(read)}`);
}

/** Problems of one OTLP/JSON ExportTraceServiceRequest body against the official schema (empty = valid). */
export function otlpTraceProblems(body: unknown): string[] {
  const T = requestType();
  const problems: string[] = [];
  const protoJson = toProtoJson(body, '$', problems);
  const message = T.fromObject(protoJson);
  const invalid = T.verify(message);
  if (invalid) problems.push(`verify: ${invalid}`);
  const read = T.toObject(T.decode(T.encode(message).finish()), TO_OBJECT);
  compare(protoJson, read, '$', problems);
  return problems;
}

/** protobuf JSON -> OTLP/JSON mapping (base64 ids to hex), the inverse of toProtoJson. */
function toOtlpJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toOtlpJson);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [
      k,
      k in ID_BYTES && typeof x === 'string' ? Buffer.from(x, 'base64').toString('hex') : toOtlpJson(x),
    ]),
  );
}

/**
 * An OTLP/HTTP protobuf ExportTraceServiceRequest read with the official schema: the request as OTLP/JSON (for the
 * same checks as a JSON body) and its problems (empty = valid).
 */
export function readOtlpProtobuf(bytes: Uint8Array): { body: unknown; problems: string[] } {
  const T = requestType();
  let message: unknown;
  try {
    message = T.decode(bytes);
  } catch (err) {
    return { body: {}, problems: [`decode: ${(err as Error).message}`] };
  }
  const problems: string[] = [];
  const invalid = T.verify(message);
  if (invalid) problems.push(`verify: ${invalid}`);
  const again = Buffer.from(T.encode(message).finish());
  if (!again.equals(Buffer.from(bytes)))
    problems.push(`encoding the decoded request gives ${again.length} bytes, not the ${bytes.length} sent`);
  return { body: toOtlpJson(T.toObject(message, TO_OBJECT)), problems };
}
