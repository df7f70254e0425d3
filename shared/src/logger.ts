/**
 * Structured JSON logging shared by every program. Each line carries timestamp, level, logger name, message and,
 * inside an active span, trace_id/span_id so a log line leads to its trace in Jaeger.
 *
 * Levels use the CFS vocabulary (DEBUG, INFO, WARNING, ERROR) because that is what the `logging_level` option and
 * `STARTING_CFS_LOG_LEVEL` carry; they map onto winston's npm levels.
 */
import { isSpanContextValid, trace } from '@opentelemetry/api';
import winston from 'winston';

export const CFS_LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
export type CfsLogLevel = (typeof CFS_LOG_LEVELS)[number];

const TO_WINSTON: Record<CfsLogLevel, string> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error' };
const FROM_WINSTON: Record<string, CfsLogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARNING', error: 'ERROR' };

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

const traceContext = winston.format((info) => {
  const ctx = trace.getActiveSpan()?.spanContext();
  if (ctx && isSpanContextValid(ctx)) {
    info.trace_id = ctx.traceId;
    info.span_id = ctx.spanId;
  }
  return info;
});

/** Python-style level names in the output, as admins grep for them (`"level":"WARNING"`). */
const cfsLevelNames = winston.format((info) => {
  info.level = FROM_WINSTON[info.level] ?? info.level.toUpperCase();
  return info;
});

const root = winston.createLogger({
  level: 'info',
  format: winston.format.combine(
    winston.format.timestamp(),
    winston.format.errors({ stack: true }),
    traceContext(),
    cfsLevelNames(),
    winston.format.json(),
  ),
  defaultMeta: { pid: process.pid },
  transports: [new winston.transports.Console({ stderrLevels: [] })],
});

type LogMethod = (message: string, meta?: Record<string, unknown>) => void;

/** The narrow logging surface the programs use (winston's own type accepts any method name, hiding typos). */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  isDebugEnabled(): boolean;
}

/** A named logger, e.g. `getLogger('batcher.batch')`; names mirror the original batcher's modules. */
export function getLogger(name: string): Logger {
  const child = root.child({ logger: name });
  return {
    debug: (m, meta) => void child.debug(m, meta),
    info: (m, meta) => void child.info(m, meta),
    warn: (m, meta) => void child.warn(m, meta),
    error: (m, meta) => void child.error(m, meta),
    isDebugEnabled: () => child.isDebugEnabled(),
  };
}

export function setLogLevel(level: CfsLogLevel): void {
  root.level = TO_WINSTON[level];
}

export function getLogLevel(): CfsLogLevel {
  return FROM_WINSTON[root.level] ?? 'INFO';
}

/** Silence output (tests) or restore it. */
export function setLogSilent(silent: boolean): void {
  for (const t of root.transports) t.silent = silent;
}

/** Route output to a custom transport (tests capture lines this way). */
export function addLogTransport(transport: winston.transport): () => void {
  root.add(transport);
  return () => root.remove(transport);
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}
