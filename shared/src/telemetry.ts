/**
 * OpenTelemetry tracing for the batcher and the health sidecar.
 *
 * Traces only, OTLP over HTTP/JSON: metrics come from prom-client and logs go to stdout, so the SDK's metric and log
 * exporters stay off (NodeSDK would otherwise push both to the collector by default). Tracing is best effort: an
 * unreachable collector costs a bounded queue and a DEBUG log line, never a blocked or crashed main loop.
 *
 * Configured by the standard OTEL_* environment (endpoint, service name, sampler, OTEL_SDK_DISABLED, resource
 * attributes) plus POD_NAME / POD_NAMESPACE / CONTAINER_NAME from the downward API (see docs/CONTRACTS.md).
 */
import {
  type Attributes,
  type DiagLogger,
  DiagLogLevel,
  type Span,
  SpanStatusCode,
  type Tracer,
  diag,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { getLogger } from './logger';

/** Span names the batcher emits (docs/CONTRACTS.md, "Traces"). */
export const SPAN = {
  cycle: 'batcher.cycle',
  options: 'batcher.options',
  checkSessions: 'batcher.check_sessions',
  collect: 'batcher.collect',
  send: 'batcher.send',
  sessionCreate: 'batcher.session.create',
  rebuildState: 'batcher.rebuild_state',
} as const;

/** Span attribute keys of our own (HTTP spans use the stable semantic conventions). */
export const ATTR = {
  cycleSeq: 'batcher.cycle.seq',
  sessionName: 'cfs.session.name',
  configurationName: 'cfs.configuration.name',
  batchSize: 'cfs.batch.size',
  sessionLimit: 'cfs.session.limit',
  sessionAnsibleLimit: 'cfs.session.ansible_limit',
  cfsErrorKind: 'cfs.error.kind',
  cfsRoute: 'cfs.route',
  // stable semconv names, repeated on phase spans so a failed call is readable without opening its HTTP span
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
  httpMethod: 'http.request.method',
  urlFull: 'url.full',
  k8sPod: 'k8s.pod.name',
  k8sNamespace: 'k8s.namespace.name',
  k8sContainer: 'k8s.container.name',
} as const;

/** Incoming paths never traced: probes and scrapes arrive every few seconds and carry no information. */
export const UNTRACED_PATHS: readonly string[] = ['/livez', '/startupz', '/healthz', '/readyz', '/metrics'];

/** Bounds that keep a dead collector harmless (each can still be overridden by its OTEL_* variable). */
export const TELEMETRY_DEFAULTS = {
  exporterTimeoutMs: 3000,
  bspExportTimeoutMs: 5000,
  bspMaxQueueSize: 2048,
  shutdownTimeoutMs: 3000,
} as const;

const TRACER_NAME = '@cfs-batcher/telemetry';

export interface TelemetryOptions {
  serviceName: string;
  serviceVersion?: string;
  /** Also instrument express (the sidecar). */
  express?: boolean;
  /** Only trace outgoing HTTP calls made inside a span (the sidecar's periodic CFS checks would be noise). */
  requireParentForOutgoing?: boolean;
  /** Upper bound for `shutdown()`. */
  shutdownTimeoutMs?: number;
  /** Tests: replace the OTLP pipeline with these processors. */
  spanProcessors?: SpanProcessor[];
  /** Tests: skip the env/process/host resource detectors. */
  autoDetectResources?: boolean;
}

export interface Telemetry {
  /** False when OTEL_SDK_DISABLED=true (then every span is a no-op). */
  readonly enabled: boolean;
  /** Flush pending spans and stop the SDK; resolves within the shutdown bound, never rejects. */
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;

const log = getLogger('telemetry');
let active: Telemetry | undefined;

/** OTEL_SDK_DISABLED as the SDK reads it (case-insensitive "true"). */
export function telemetryDisabled(env: Env = process.env): boolean {
  return (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true';
}

/**
 * Our resource attributes: service name/version and the pod identity from the downward API. The env detector runs
 * after this, so OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES still win.
 */
export function baseResourceAttributes(
  opts: Pick<TelemetryOptions, 'serviceName' | 'serviceVersion'>,
  env: Env = process.env,
): Attributes {
  const attrs: Attributes = { [ATTR_SERVICE_NAME]: opts.serviceName };
  if (opts.serviceVersion) attrs[ATTR_SERVICE_VERSION] = opts.serviceVersion;
  const fromEnv: [string, string | undefined][] = [
    [ATTR.k8sPod, env.POD_NAME],
    [ATTR.k8sNamespace, env.POD_NAMESPACE],
    [ATTR.k8sContainer, env.CONTAINER_NAME],
  ];
  for (const [key, value] of fromEnv) if (value && value.trim()) attrs[key] = value.trim();
  return attrs;
}

/** True for requests the HTTP instrumentation must not trace (query string ignored). */
export function isUntracedPath(url: string | undefined): boolean {
  if (!url) return false;
  const path = url.split('?')[0] ?? '';
  return UNTRACED_PATHS.includes(path);
}

function positiveNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * The span processors for OTEL_TRACES_EXPORTER (otlp by default, console for local debugging, none). Reads
 * process.env, like the OTLP exporter it builds (endpoint, headers and timeouts come from there).
 */
export function spanProcessorsFromEnv(): SpanProcessor[] {
  const env = process.env;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (exporters.length === 0 || exporters.includes('none')) return [];
  const processors: SpanProcessor[] = [];
  for (const name of new Set(exporters)) {
    if (name === 'otlp') processors.push(otlpProcessor(env));
    else if (name === 'console') processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
    else log.warn(`Unsupported OTEL_TRACES_EXPORTER value "${name}" ignored (supported: otlp, console, none)`);
  }
  return processors;
}

function otlpProcessor(env: Env): SpanProcessor {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (protocol !== '' && protocol !== 'http/json') {
    // only the JSON exporter is a dependency; Jaeger and the collector accept it on the same port (4318)
    log.warn(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported, sending traces as http/json`);
  }
  const timeoutSet = positiveNumber(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  const exporter = new OTLPTraceExporter(
    timeoutSet === undefined ? { timeoutMillis: TELEMETRY_DEFAULTS.exporterTimeoutMs } : {},
  );
  // BatchSpanProcessor applies OTEL_BSP_* for every field left undefined here
  return new BatchSpanProcessor(exporter, {
    exportTimeoutMillis:
      positiveNumber(env.OTEL_BSP_EXPORT_TIMEOUT) === undefined ? TELEMETRY_DEFAULTS.bspExportTimeoutMs : undefined,
    maxQueueSize:
      positiveNumber(env.OTEL_BSP_MAX_QUEUE_SIZE) === undefined ? TELEMETRY_DEFAULTS.bspMaxQueueSize : undefined,
  });
}

/** OTel's own diagnostics (export failures included) become DEBUG lines: a dead collector is not our error. */
function diagBridge(): DiagLogger {
  const debug = (message: string, ...args: unknown[]): void => {
    log.debug(args.length > 0 ? `${message} ${args.map(String).join(' ')}` : message);
  };
  return { error: debug, warn: debug, info: debug, debug, verbose: debug };
}

/**
 * Start tracing. Call it first thing in main(); calling it again returns the running instance. Never throws: a
 * broken telemetry set-up is logged and the program runs untraced.
 */
export function startTelemetry(opts: TelemetryOptions): Telemetry {
  if (active) {
    log.warn('startTelemetry called twice; keeping the first instance');
    return active;
  }
  if (telemetryDisabled()) {
    log.info('Tracing disabled (OTEL_SDK_DISABLED=true)');
    active = inactive();
    return active;
  }
  try {
    active = startSdk(opts);
  } catch (err) {
    log.error(`Tracing could not start, continuing without it: ${err instanceof Error ? err.message : String(err)}`);
    active = inactive();
  }
  return active;
}

function inactive(): Telemetry {
  return {
    enabled: false,
    shutdown: async () => {
      active = undefined;
    },
  };
}

function startSdk(opts: TelemetryOptions): Telemetry {
  const instrumentations = [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => isUntracedPath(req.url),
      requireParentforOutgoingSpans: opts.requireParentForOutgoing ?? false,
    }),
    ...(opts.express ? [new ExpressInstrumentation()] : []),
  ];
  const sdk = new NodeSDK({
    resource: defaultResource().merge(resourceFromAttributes(baseResourceAttributes(opts))),
    autoDetectResources: opts.autoDetectResources ?? true,
    spanProcessors: opts.spanProcessors ?? spanProcessorsFromEnv(),
    instrumentations,
    metricReaders: [],
    logRecordProcessors: [],
  });
  // NodeSDK installs a console diag logger when OTEL_LOG_LEVEL is set: the user asked for it, keep it
  if (process.env.OTEL_LOG_LEVEL === undefined) diag.setLogger(diagBridge(), DiagLogLevel.WARN);
  sdk.start();
  // Modules that loaded before start() are patched when required again: the patch is applied in place, so a client
  // created earlier (axios in the CFS client) is traced too.
  require('http');
  require('https');
  if (opts.express) require('express');
  const bound = opts.shutdownTimeoutMs ?? TELEMETRY_DEFAULTS.shutdownTimeoutMs;
  let stopping: Promise<void> | undefined;
  log.info(
    `Tracing started (service ${opts.serviceName}, exporter ${process.env.OTEL_TRACES_EXPORTER ?? 'otlp'}, ` +
      `endpoint ${process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'default'})`,
  );
  return {
    enabled: true,
    shutdown: () => {
      stopping ??= boundedShutdown(() => sdk.shutdown(), bound).finally(() => {
        active = undefined;
      });
      return stopping;
    },
  };
}

/** Run `stop` but give up after `boundMs`: a dead collector must not hold the container past its grace period. */
export async function boundedShutdown(stop: () => Promise<void>, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), boundMs);
    timer.unref();
  });
  try {
    const result = await Promise.race([stop().then(() => 'done' as const), timeout]);
    if (result === 'timeout') log.debug(`Tracing shutdown did not finish within ${boundMs} ms; pending spans dropped`);
  } catch (err) {
    log.debug(`Tracing shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
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
  if (typeof e.kind === 'string') attrs[ATTR.cfsErrorKind] = e.kind;
  if (typeof e.status === 'number') attrs[ATTR.httpStatus] = e.status;
  if (typeof e.method === 'string') attrs[ATTR.httpMethod] = e.method;
  if (typeof e.url === 'string') attrs[ATTR.urlFull] = e.url;
  if (typeof e.route === 'string') attrs[ATTR.cfsRoute] = e.route;
  attrs[ATTR.errorType] =
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

/**
 * Attributes of a `batcher.session.create` span. `limit` is the session's configuration_limit (the layers it runs);
 * `ansibleLimit`, the node list, is optional because it can be long.
 */
export function sessionSpanAttributes(s: {
  name: string;
  configuration: string;
  batchSize: number;
  limit: string;
  ansibleLimit?: string;
}): Attributes {
  return {
    [ATTR.sessionName]: s.name,
    [ATTR.configurationName]: s.configuration,
    [ATTR.batchSize]: s.batchSize,
    [ATTR.sessionLimit]: s.limit,
    ...(s.ansibleLimit !== undefined ? { [ATTR.sessionAnsibleLimit]: s.ansibleLimit } : {}),
  };
}
