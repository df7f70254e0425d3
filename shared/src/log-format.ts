/**
 * What goes into a log line, as winston formats: the trace ids of the active span, and fields made safe for
 * `format.json()`; plus `logInfo()`, which turns a `(message, meta)` call into winston's info object.
 *
 * None of it may throw into the caller (the main loop logs): a field that cannot be read (a throwing getter or
 * toJSON) is marked in place, and whatever still fails is reported by the logger as a line with `log_error`.
 */
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { format } from 'winston';

/**
 * trace_id and span_id of the span active at the call, so a line leads to its trace in Jaeger. Read here rather than
 * through instrumentation-winston, which only patches a winston loaded after the SDK and does nothing under jest.
 */
export const traceContext = format((info) => {
  try {
    const ctx = trace.getActiveSpan()?.spanContext();
    if (ctx && isSpanContextValid(ctx)) {
      info.trace_id = ctx.traceId;
      info.span_id = ctx.spanId;
    }
  } catch {
    // no trace ids rather than no line
  }
  return info;
});

/**
 * Every field as JSON can hold it, for `format.json()` (which sorts the keys, writes a cycle as "[Circular]" and
 * BigInt as a string, but reads every getter and toJSON unguarded and writes an Error as `{}`): an Error becomes its
 * message, stack, cause and primitive own fields (object fields, such as a request config holding a token, stay out);
 * a field that throws when read becomes "[unreadable: ...]"; nesting deeper than any record is cut at "[Too deep]".
 */
export const jsonSafe = format((info) => {
  for (const key of Object.keys(info)) setKey(info, key, plain(readKey(info, key)));
  return info;
});

/**
 * winston's info object for one call, merged as winston's `log(level, message, meta)` merges it (meta may replace
 * pid, logger and timestamp, not level; a meta `message` is appended, an Error's stack and cause kept), without its
 * Object.assign: that runs getters unguarded and turns a `__proto__` key (data in a CFS answer) into the prototype.
 */
export function logInfo(level: string, name: string, message: unknown, meta: unknown): Record<string, unknown> {
  const info: Record<string, unknown> = { pid: process.pid, logger: name };
  let text = message;
  if (meta !== null && typeof meta === 'object') {
    for (const k of Object.keys(meta)) setKey(info, k, readKey(meta, k));
    const extra = readKey(meta, 'message');
    // a string as winston appends it; anything else as JSON rather than "[object Object]"
    if (extra) text = `${String(message)} ${typeof extra === 'string' ? extra : (JSON.stringify(plain(extra)) ?? '')}`;
    if (meta instanceof Error) Object.assign(info, { stack: readKey(meta, 'stack'), cause: readKey(meta, 'cause') });
  }
  info.message = text;
  info.level = level;
  return info;
}

/** The line left when the call's fields cannot be walked at all (a hostile Proxy, a throwing toString). */
export function fallbackInfo(level: string, name: string, message: unknown, err: unknown): Record<string, unknown> {
  return {
    level,
    logger: name,
    message: typeof message === 'string' ? message : undefined,
    pid: process.pid,
    log_error: `log meta could not be serialized: ${describe(err)}`,
  };
}

/** A thrown value as text; never throws itself (a BigInt, a cycle or undefined must not skip the exit after it). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return describe(err);
  }
}

/** Deeper than any record the programs log; a line stays readable and the stack safe. */
const MAX_DEPTH = 32;

/** A JSON-safe copy of one value (see jsonSafe); a cycle is "[Circular]", an object seen twice is copied twice. */
function plain(value: unknown, ancestors = new Set<object>()): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.has(value)) return '[Circular]';
  if (ancestors.size >= MAX_DEPTH) return '[Too deep]';
  ancestors.add(value);
  const toJSON = readKey(value, 'toJSON');
  let out: unknown;
  if (value instanceof Error) {
    out = plain(errorFields(value), ancestors);
  } else if (typeof toJSON === 'function') {
    out = plain(
      call(() => toJSON.call(value) as unknown),
      ancestors,
    );
  } else if (Array.isArray(value)) {
    out = value.map((v) => plain(v, ancestors) ?? null);
  } else {
    const copy: Record<string, unknown> = {};
    for (const k of Object.keys(value)) {
      const v = plain(readKey(value, k), ancestors);
      if (v !== undefined) setKey(copy, k, v);
    }
    out = copy;
  }
  ancestors.delete(value);
  return out;
}

function errorFields(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { message: readKey(err, 'message'), stack: readKey(err, 'stack') };
  for (const k of Object.keys(err)) {
    const v = readKey(err, k);
    if (v === null || typeof v !== 'object') setKey(fields, k, v);
  }
  if ('cause' in err) fields.cause = readKey(err, 'cause');
  return fields;
}

function readKey(obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    return unreadable(err);
  }
}

function call(read: () => unknown): unknown {
  try {
    return read();
  } catch (err) {
    return unreadable(err);
  }
}

const unreadable = (err: unknown) => `[unreadable: ${describe(err)}]`;

/** Assignment that also keeps a `__proto__` key as data instead of changing the copy's prototype. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

function describe(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return 'unknown error';
  }
}
