/**
 * Span helpers for every program, light: they need only `@opentelemetry/api`, so importing them (through the barrel,
 * or as `@cfs-batcher/shared/telemetry` from a tracing preload) loads no SDK. Without a registered tracer provider
 * every span is a no-op.
 *
 * The SDK bootstrap lives in `@cfs-batcher/shared/tracing` (tracing.ts, NodeSDK). `startTracing()` loads it only when
 * tracing is on: OTEL_SDK_DISABLED not true and an exporter endpoint or OTEL_TRACES_EXPORTER set.
 */
import { type Attributes, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { getLogger } from './logger';

/**
 * The attribute keys `errorAttributes` sets on a failed span: the stable semantic-convention names of the HTTP call,
 * repeated on phase spans so a failed call is readable without opening its HTTP span, and two of our own for the CFS
 * client's error kind and route. The batcher's own keys (cycle, session) are in batcher/src/spans.ts.
 */
export const ERROR_ATTR = {
  cfsErrorKind: 'cfs.error.kind',
  cfsRoute: 'cfs.route',
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
  httpMethod: 'http.request.method',
  urlFull: 'url.full',
} as const;

/** Incoming paths never traced: probes and scrapes arrive every few seconds and carry no information. */
export const UNTRACED_PATHS: readonly string[] = ['/livez', '/startupz', '/healthz', '/readyz', '/metrics'];

const TRACER_NAME = '@cfs-batcher/telemetry';

export interface TelemetryOptions {
  serviceName: string;
  serviceVersion?: string;
  /** Also instrument express (the sidecar). */
  express?: boolean;
  /** Only trace outgoing HTTP calls made inside a span (the sidecar's periodic CFS checks would be noise). */
  requireParentForOutgoing?: boolean;
  /** Upper bound for `shutdown()` (default SHUTDOWN_TIMEOUT_MS, 1.2 s). */
  shutdownTimeoutMs?: number;
  /** Tests: replace the pipeline NodeSDK builds from OTEL_TRACES_EXPORTER with these processors. */
  spanProcessors?: SpanProcessor[];
  /** Tests: skip the env/process/host resource detectors. */
  autoDetectResources?: boolean;
}

export interface Telemetry {
  /** False when OTEL_SDK_DISABLED=true (then every span is a no-op). */
  readonly enabled: boolean;
  /** Where traces go, or why they are off: the program's one start-up INFO line (`logTracingStatus`). */
  readonly status?: string;
  /** Flush pending spans and stop the SDK; resolves within the shutdown bound, never rejects. */
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;

const log = getLogger('telemetry');

/** OTEL_SDK_DISABLED as the SDK reads it (case-insensitive "true"). */
export function telemetryDisabled(env: Env = process.env): boolean {
  return (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true';
}

/**
 * Tracing is on when the SDK is not disabled and an exporter is configured: an endpoint, or OTEL_TRACES_EXPORTER other
 * than `none` (which the SDK would only answer with a warning). Only this gate reads OTEL_* here (the SDK reads the
 * rest): with tracing off the SDK is never loaded.
 */
export function tracingEnabled(env: Env = process.env): boolean {
  if (telemetryDisabled(env)) return false;
  const value = (name: string): string => (env[name] ?? '').trim().toLowerCase();
  if (value('OTEL_TRACES_EXPORTER') === 'none') return false;
  return ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_TRACES_EXPORTER'].some(
    (name) => value(name) !== '',
  );
}

/** Why tracing is off, in the start-up INFO line: what to set to turn it on. */
export function tracingOffReason(env: Env = process.env): string {
  if (telemetryDisabled(env)) return 'OTEL_SDK_DISABLED=true';
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return 'OTEL_TRACES_EXPORTER=none';
  return 'no trace exporter configured (set OTEL_EXPORTER_OTLP_ENDPOINT to an OTLP/HTTP collector to send traces)';
}

/** Where traces go, in the start-up INFO line of a program with tracing on. */
export function tracesDestination(env: Env = process.env): string {
  const value = (name: string): string => (env[name] ?? '').trim();
  const exporter = value('OTEL_TRACES_EXPORTER') || 'otlp';
  if (exporter !== 'otlp') return `exporter ${exporter}`;
  const traces = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== '') return traces;
  const base = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  return base !== '' ? `${base.replace(/\/$/, '')}/v1/traces` : "the OTLP exporter's default endpoint";
}

/**
 * The tracing preload's entry: starts NodeSDK (`@cfs-batcher/shared/tracing`, required here and only here) when
 * tracing is on or the caller brings its own span processors; otherwise a no-op that loads nothing. Call it before
 * node:http or express is first required, so the instrumentations hook them as they load.
 */
export function startTracing(opts: TelemetryOptions): Telemetry {
  if (!opts.spanProcessors && !tracingEnabled()) {
    return { enabled: false, status: `Tracing off: ${tracingOffReason()}`, shutdown: () => Promise.resolve() };
  }
  // synchronous on purpose: the SDK must have hooked require before main.ts goes on to load http and express
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load: with tracing off the SDK never loads
  const sdk = require('./tracing') as typeof import('./tracing');
  return sdk.startTelemetry(opts);
}

/**
 * The start-up INFO line saying where traces go or why they are off. Logged by the program once it really starts
 * (after `--help` and its settings), not by the preload, which runs before anything else.
 */
export function logTracingStatus(t: { status?: string } | null | undefined): void {
  if (t?.status) log.info(t.status);
}

/** True for requests the HTTP instrumentation must not trace (query string ignored). */
export function isUntracedPath(url: string | undefined): boolean {
  if (!url) return false;
  const path = url.split('?')[0] ?? '';
  return UNTRACED_PATHS.includes(path);
}

export function getTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Attributes describing a failure. Duck-typed on CfsError's fields (kind, status, method, url, route) so any error
 * from the CFS client shows the URL and status on the span that failed.
 */
export function errorAttributes(err: unknown): Attributes {
  const attrs: Attributes = {};
  if (typeof err !== 'object' || err === null) return attrs;
  const e = err as Record<string, unknown>;
  if (typeof e.kind === 'string') attrs[ERROR_ATTR.cfsErrorKind] = e.kind;
  if (typeof e.status === 'number') attrs[ERROR_ATTR.httpStatus] = e.status;
  if (typeof e.method === 'string') attrs[ERROR_ATTR.httpMethod] = e.method;
  if (typeof e.url === 'string') attrs[ERROR_ATTR.urlFull] = e.url;
  if (typeof e.route === 'string') attrs[ERROR_ATTR.cfsRoute] = e.route;
  attrs[ERROR_ATTR.errorType] =
    typeof e.status === 'number' ? String(e.status) : typeof e.kind === 'string' ? e.kind : errorName(err);
  return attrs;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

/** Record `err` on `span`: exception event, ERROR status, and the CFS call details when there are some. */
export function recordSpanError(span: Span, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  span.recordException(err instanceof Error ? err : message);
  span.setAttributes(errorAttributes(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * Run `fn` inside an active span: nested spans and CFS HTTP calls become its children, a thrown error is recorded
 * (and rethrown), and the span always ends.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
): Promise<T> {
  return getTracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      recordSpanError(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}
