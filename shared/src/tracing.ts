/**
 * The OpenTelemetry SDK for the batcher and the health sidecar: `@cfs-batcher/shared/tracing`.
 *
 * Heavy (exporter, instrumentations, resource detectors): never imported by the barrel. Each program's tracing
 * preload reaches it through `startTracing()` (telemetry.ts), which requires this module only when tracing is on.
 *
 * Traces only, OTLP over HTTP/JSON: metrics come from prom-client and logs go to stdout. Built from sdk-trace-node
 * directly rather than sdk-node, which pulls gRPC, protobuf, Zipkin and the metric/log exporters the programs never
 * use. Tracing is best effort: an unreachable collector costs a bounded queue and a DEBUG log line, never a blocked
 * or crashed main loop.
 *
 * Configured by the standard OTEL_* environment (endpoint, service name, sampler, OTEL_SDK_DISABLED, resource
 * attributes) plus POD_NAME / POD_NAMESPACE / CONTAINER_NAME from the downward API (see docs/CONTRACTS.md).
 */
import {
  type Attributes,
  type DiagLogger,
  DiagConsoleLogger,
  DiagLogLevel,
  type TextMapPropagator,
  diag,
} from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { getLogger } from './logger';
import { ATTR, isUntracedPath, telemetryDisabled, type Telemetry, type TelemetryOptions } from './telemetry';

export type { Telemetry, TelemetryOptions } from './telemetry';

/** Bounds that keep a dead collector harmless (each can still be overridden by its OTEL_* variable). */
export const TELEMETRY_DEFAULTS = {
  exporterTimeoutMs: 3000,
  bspExportTimeoutMs: 5000,
  bspMaxQueueSize: 2048,
  /**
   * The last spans' flush on SIGTERM: a program must exit within 2 s of SIGTERM even with a dead collector (the
   * image check measured 2.2-3.5 s with a 3 s bound), so the flush gives up after 1.2 s.
   */
  shutdownTimeoutMs: 1200,
} as const;

type Env = Record<string, string | undefined>;

const log = getLogger('telemetry');
let active: Telemetry | undefined;

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

/** OTEL_LOG_LEVEL asks for the SDK's console diagnostics (as NodeSDK did); otherwise they go to our DEBUG lines. */
function setDiagLogger(env: Env): void {
  const level = env.OTEL_LOG_LEVEL?.trim().toUpperCase();
  const asked = level ? DiagLogLevel[level as keyof typeof DiagLogLevel] : undefined;
  if (asked !== undefined) diag.setLogger(new DiagConsoleLogger(), { logLevel: asked });
  else diag.setLogger(diagBridge(), DiagLogLevel.WARN);
}

/**
 * Start tracing. Call it first thing (from the tracing preload); calling it again returns the running instance.
 * Never throws: a broken telemetry set-up is logged and the program runs untraced.
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
    shutdown: () => {
      active = undefined;
      return Promise.resolve();
    },
  };
}

/**
 * OTEL_PROPAGATORS as NodeSDK read it, for the W3C propagators we ship (b3/jaeger would need packages we do not):
 * undefined = the provider's default (tracecontext + baggage), null = none.
 */
export function propagatorFromEnv(env: Env = process.env): TextMapPropagator | null | undefined {
  const names = (env.OTEL_PROPAGATORS ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '');
  if (names.length === 0) return undefined;
  if (names.includes('none')) return null;
  const propagators: TextMapPropagator[] = [];
  for (const name of new Set(names)) {
    if (name === 'tracecontext') propagators.push(new W3CTraceContextPropagator());
    else if (name === 'baggage') propagators.push(new W3CBaggagePropagator());
    else log.warn(`Unsupported OTEL_PROPAGATORS value "${name}" ignored (supported: tracecontext, baggage, none)`);
  }
  return propagators.length === 0 ? undefined : new CompositePropagator({ propagators });
}

function startSdk(opts: TelemetryOptions): Telemetry {
  setDiagLogger(process.env);
  let resource = defaultResource().merge(resourceFromAttributes(baseResourceAttributes(opts)));
  if (opts.autoDetectResources ?? true) {
    resource = resource.merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] }));
  }
  const provider = new NodeTracerProvider({ resource, spanProcessors: opts.spanProcessors ?? spanProcessorsFromEnv() });
  provider.register({ propagator: propagatorFromEnv() }); // global tracer provider, AsyncLocalStorage context
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => isUntracedPath(req.url),
        requireParentforOutgoingSpans: opts.requireParentForOutgoing ?? false,
      }),
      // one span per route handler; `middleware - <anonymous>` spans (json parser, metrics) carry nothing
      ...(opts.express ? [new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] })] : []),
    ],
  });
  // Modules that loaded before this point are patched when required again: the patch is applied in place, so a
  // client created earlier is traced too (the CFS transport takes `request` from node:http/node:https per call).
  /* eslint-disable @typescript-eslint/no-require-imports -- re-required for their side effect: the patch */
  require('http');
  require('https');
  if (opts.express) require('express');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const bound = opts.shutdownTimeoutMs ?? TELEMETRY_DEFAULTS.shutdownTimeoutMs;
  let stopping: Promise<void> | undefined;
  log.info(
    `Tracing started (service ${opts.serviceName}, exporter ${process.env.OTEL_TRACES_EXPORTER ?? 'otlp'}, ` +
      `endpoint ${process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'default'})`,
  );
  return {
    enabled: true,
    shutdown: () => {
      stopping ??= boundedShutdown(async () => {
        unregister();
        await provider.shutdown();
      }, bound).finally(() => {
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
