/**
 * Structured JSON logging shared by every program: one JSON object per line on stdout with timestamp, level, logger
 * name, message, pid, the caller's meta and, inside an active span, trace_id/span_id so a line leads to its trace in
 * Jaeger. Keys are sorted, as winston's json format (safe-stable-stringify) wrote them.
 *
 * Written by hand rather than with winston (1-6 MB of RSS per program, 8 MB in a bare node) for what is one
 * JSON.stringify and one write. Levels use the CFS vocabulary (DEBUG, INFO, WARNING, ERROR): that is what the
 * `logging_level` option and `STARTING_CFS_LOG_LEVEL` carry, and admins grep `"level":"WARNING"` as they did for the
 * Python original.
 *
 * Logging never throws into its caller (the main loop calls it): a field that cannot be read (a throwing getter) is
 * marked in place, and meta that cannot be walked at all (a hostile Proxy) falls back to a line with the message and
 * a `log_error` field.
 */
import { isSpanContextValid, trace } from '@opentelemetry/api';

export const CFS_LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
export type CfsLogLevel = (typeof CFS_LOG_LEVELS)[number];

const RANK: Record<CfsLogLevel, number> = { DEBUG: 0, INFO: 1, WARNING: 2, ERROR: 3 };

export function isCfsLogLevel(value: unknown): value is CfsLogLevel {
  return typeof value === 'string' && (CFS_LOG_LEVELS as readonly string[]).includes(value.toUpperCase());
}

export function parseCfsLogLevel(value: string | undefined, fallback: CfsLogLevel = 'INFO'): CfsLogLevel {
  if (value === undefined || value === '') return fallback;
  const upper = value.toUpperCase();
  if (upper === 'WARN') return 'WARNING';
  if (upper === 'CRITICAL') return 'ERROR';
  return isCfsLogLevel(upper) ? upper : fallback;
}

/** Receives every line that passes the level (tests capture lines this way); `record` is the line's object. */
export type LogSink = (line: string, record: Record<string, unknown>) => void;

let threshold = RANK.INFO;
let silent = false;
let sinks: LogSink[] = [];

type LogMethod = (message: string, meta?: Record<string, unknown>) => void;

/** The narrow logging surface the programs use. */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  isDebugEnabled(): boolean;
}

/** A named logger, e.g. `getLogger('batcher.batch')`; names mirror the original batcher's modules. */
export function getLogger(name: string): Logger {
  const at =
    (level: CfsLogLevel): LogMethod =>
    (message, meta) => {
      if (RANK[level] >= threshold) emit(level, name, message, meta);
    };
  return {
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARNING'),
    error: at('ERROR'),
    isDebugEnabled: () => threshold <= RANK.DEBUG,
  };
}

export function setLogLevel(level: CfsLogLevel): void {
  threshold = RANK[level] ?? threshold;
}

export function getLogLevel(): CfsLogLevel {
  return CFS_LOG_LEVELS[threshold] ?? 'INFO';
}

/** Silence stdout (tests) or restore it; sinks keep receiving lines either way. */
export function setLogSilent(value: boolean): void {
  silent = value;
}

/** Send every line to `sink` as well; returns the function that removes it. */
export function addLogSink(sink: LogSink): () => void {
  sinks = [...sinks, sink];
  return () => {
    sinks = sinks.filter((s) => s !== sink);
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

/**
 * Exit with `code` once stdout has taken every line (at most `maxWaitMs`): a pipe whose reader is slow holds the
 * last lines in node's buffer, and process.exit() would drop them, the fatal line first, possibly cut mid-line.
 */
export function exitAfterLogs(code: number, maxWaitMs = 2000): void {
  process.exitCode = code;
  const exit = () => process.exit(code);
  if (process.stdout.writableLength === 0) return exit();
  process.stdout.once('drain', exit);
  setTimeout(exit, maxWaitMs);
}

// A closed stdout (the log reader gone) reports EPIPE as an 'error' event, not to write()'s caller: without a
// listener it would crash the process from inside a log call. The lines are lost either way; the loop is not.
process.stdout.on('error', () => undefined);

function emit(level: CfsLogLevel, name: string, message: string, meta: Record<string, unknown> | undefined): void {
  let record: Record<string, unknown>;
  let line: string;
  try {
    record = buildRecord(level, name, message, meta);
    line = JSON.stringify(record);
  } catch (err) {
    const reason = `log meta could not be serialized: ${describe(err)}`;
    const text = typeof message === 'string' ? message : undefined;
    record = sorted({ level, logger: name, message: text, pid: process.pid, ...now(), log_error: reason });
    line = JSON.stringify(record);
  }
  // stdout is a file or a pipe in a pod: node writes files synchronously and tries a pipe write at once, so a line
  // logged just before process.exit() arrives unless the reader has left 64 KiB unread (as with winston).
  if (!silent) {
    try {
      process.stdout.write(line + '\n');
    } catch {
      // nowhere left to report it
    }
  }
  for (const sink of sinks) {
    try {
      sink(line, record);
    } catch {
      // a broken test sink must not break the program
    }
  }
}

/** The timestamp and, inside a valid span, its ids. */
function now(): Record<string, string> {
  const fields: Record<string, string> = { timestamp: new Date().toISOString() };
  try {
    const ctx = trace.getActiveSpan()?.spanContext();
    if (ctx && isSpanContextValid(ctx)) {
      fields.trace_id = ctx.traceId;
      fields.span_id = ctx.spanId;
    }
  } catch {
    // no trace ids rather than no line
  }
  return fields;
}

/** winston's merge: meta may replace pid, logger, timestamp, not level; its `message` (or an Error's) is appended. */
function buildRecord(level: CfsLogLevel, name: string, message: unknown, meta: unknown): Record<string, unknown> {
  const { timestamp, ...span } = now();
  const record: Record<string, unknown> = { pid: process.pid, logger: name, timestamp };
  let text = message;
  if (meta !== null && typeof meta === 'object') {
    for (const k of Object.keys(meta)) setKey(record, k, readKey(meta, k));
    const extra = readKey(meta, 'message');
    // a string as winston appended it; anything else as JSON rather than "[object Object]"
    if (extra) text = `${String(message)} ${typeof extra === 'string' ? extra : (JSON.stringify(plain(extra)) ?? '')}`;
    if (meta instanceof Error) Object.assign(record, { stack: readKey(meta, 'stack'), cause: readKey(meta, 'cause') });
  }
  record.message = text;
  record.level = level;
  return sorted(Object.assign(record, span));
}

/** Deeper than any record the programs log; a line stays readable and the stack safe. */
const MAX_DEPTH = 32;

const sorted = (record: Record<string, unknown>) => plain(record) as Record<string, unknown>;

/**
 * A JSON-safe copy: keys sorted, a cycle as "[Circular]", BigInt as a string, an Error as its message, stack and
 * primitive own fields (JSON.stringify alone gives `{}`; object fields, such as a request config holding a token,
 * stay out), toJSON honoured, a throwing getter marked.
 */
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
    for (const k of Object.keys(value).sort()) {
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
  return call(() => (obj as Record<string, unknown>)[key]);
}

function call(read: () => unknown): unknown {
  try {
    return read();
  } catch (err) {
    return `[unreadable: ${describe(err)}]`;
  }
}

/** Assignment that also keeps a `__proto__` key as data instead of changing the copy's prototype. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function describe(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return 'unknown error';
  }
}
