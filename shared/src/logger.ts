/**
 * Structured JSON logging shared by every program, on winston: one JSON object per line on stdout with timestamp,
 * level, logger name, message, pid, the caller's meta and, inside an active span, trace_id/span_id so a line leads to
 * its trace in Jaeger. Keys sorted (winston's `format.json()`); the formats are in log-format.ts.
 *
 * Levels use the CFS vocabulary (DEBUG, INFO, WARNING, ERROR) as winston's custom levels: that is what the
 * `logging_level` option and `LOG_LEVEL` (or the original's `STARTING_CFS_LOG_LEVEL`) carry, and admins grep
 * `"level":"WARNING"` as they did for the Python original.
 *
 * Logging never throws into its caller (the main loop calls it), and never stalls: a write that throws is dropped, a
 * closed stdout is ignored.
 */
import { Writable } from 'node:stream';
import winston, { format } from 'winston';
import { fallbackInfo, jsonSafe, logInfo, traceContext } from './log-format';

export { errorMessage } from './log-format';

export const CFS_LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
export type CfsLogLevel = (typeof CFS_LOG_LEVELS)[number];

/** winston's levels, most severe first. */
const LEVELS: Record<CfsLogLevel, number> = { ERROR: 0, WARNING: 1, INFO: 2, DEBUG: 3 };

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

/** Receives every line that passes the level (tests capture lines this way); `record` is the line parsed. */
export type LogSink = (line: string, record: Record<string, unknown>) => void;

type LogMethod = (message: string, meta?: Record<string, unknown>) => void;

/** The narrow logging surface the programs use. */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  isDebugEnabled(): boolean;
}

/** triple-beam's MESSAGE: where format.json() leaves the line. */
const MESSAGE = Symbol.for('message');

/**
 * winston's Stream transport, one line per write, with its log() replaced for two reasons: a write that throws
 * (stdout a file on a full disk) would leave the transport waiting for its callback, every later line queued behind
 * it; and the per-line 'logged' event, which nothing here listens to, is a setImmediate holding each line until the
 * event loop turns (in a burst of lines, collecting those costs more CPU than writing the lines).
 */
class LineStream extends winston.transports.Stream {
  constructor(private readonly out: NodeJS.WritableStream) {
    super({ stream: out, eol: '\n' });
  }

  override log(info: Record<symbol, unknown>, next: () => void): void {
    try {
      this.out.write(`${String(info[MESSAGE])}${this.eol}`);
    } catch {
      // dropped: nowhere left to report it
    }
    next();
  }
}

const stdoutTransport = new LineStream(process.stdout);

const root = winston.createLogger({
  levels: LEVELS,
  level: 'INFO',
  // timestamp only where the meta brought none; the span's ids over any the meta brought
  format: format.combine(format.timestamp(), traceContext(), jsonSafe(), format.json()),
  transports: [stdoutTransport],
});

// A closed stdout (the log reader gone) reports EPIPE as an 'error' event on the stream, which the Stream transport
// does not listen to: unhandled, it would crash the process from inside a log call. The lines are lost either way;
// the loop is not. The logger's own errors (a line logged after exitAfterLogs ended it) have nowhere to go either.
process.stdout.on('error', () => undefined);
root.on('error', () => undefined);

/** A named logger, e.g. `getLogger('batcher.batch')`; names mirror the original batcher's modules. */
export function getLogger(name: string): Logger {
  const at =
    (level: CfsLogLevel): LogMethod =>
    (message, meta) => {
      if (enabled(level)) write(level, name, message, meta);
    };
  return {
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARNING'),
    error: at('ERROR'),
    isDebugEnabled: () => enabled('DEBUG'),
  };
}

/**
 * Checked before the info is built: winston runs the logger's formats before its transports filter by level. The
 * transports have no level of their own, so the logger's decides, compared by rank as winston's transports do
 * (isLevelEnabled() would walk the transports at every call).
 */
function enabled(level: CfsLogLevel): boolean {
  return LEVELS[level] <= LEVELS[root.level as CfsLogLevel];
}

function write(level: CfsLogLevel, name: string, message: unknown, meta: unknown): void {
  try {
    root.log(logInfo(level, name, message, meta) as winston.LogEntry);
  } catch (err) {
    try {
      root.log(fallbackInfo(level, name, message, err) as winston.LogEntry);
    } catch {
      // nowhere left to report it
    }
  }
}

export function setLogLevel(level: CfsLogLevel): void {
  if (Object.hasOwn(LEVELS, level)) root.level = level;
}

export function getLogLevel(): CfsLogLevel {
  return root.level as CfsLogLevel;
}

/** Silence stdout (tests) or restore it; sinks keep receiving lines either way. */
export function setLogSilent(value: boolean): void {
  stdoutTransport.silent = value;
}

let sinks: LogSink[] = [];
let sinkTransport: winston.transport | undefined;

/** Every line to each sink, through a Stream transport of its own, present only while a sink is. */
const sinkStream = new Writable({
  decodeStrings: false,
  write(chunk: string, _encoding, done) {
    const line = chunk.slice(0, -1);
    for (const sink of sinks) {
      try {
        sink(line, JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a broken test sink must not break the program
      }
    }
    done();
  },
});

/** Send every line to `sink` as well; returns the function that removes it. */
export function addLogSink(sink: LogSink): () => void {
  sinks = [...sinks, sink];
  if (!sinkTransport) root.add((sinkTransport = new LineStream(sinkStream)));
  return () => {
    sinks = sinks.filter((s) => s !== sink);
    if (sinks.length === 0 && sinkTransport) {
      root.remove(sinkTransport);
      sinkTransport = undefined;
    }
  };
}

/**
 * Exit with `code` once every line logged so far has left the process, waiting at most `maxWaitMs`: process.exit()
 * drops what is still queued, the fatal line first, possibly cut mid-line.
 */
export function exitAfterLogs(code: number, maxWaitMs = 2000): void {
  process.exitCode = code;
  // the code of the latest call: a crash while a clean stop waits for its lines still exits non-zero
  const exit = () => process.exit();
  setTimeout(exit, maxWaitMs);
  void logsWritten().then(exit);
}

let flushed: Promise<void> | undefined;

/**
 * winston's flush (end the logger; its 'finish' waits for each transport's), then stdout's own buffer: a pipe whose
 * reader is slow keeps the last lines in node. Lines logged after this are dropped.
 */
function logsWritten(): Promise<void> {
  flushed ??= new Promise<void>((resolve) => {
    root.once('finish', resolve);
    root.end();
  }).then(
    () =>
      new Promise<void>((resolve) => {
        const out = process.stdout;
        if (out.writableLength === 0 || out.destroyed) return resolve();
        out.once('drain', resolve);
        out.once('close', resolve);
      }),
  );
  return flushed;
}
