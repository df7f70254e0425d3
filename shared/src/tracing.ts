/**
 * The OpenTelemetry bootstrap of the batcher and the health sidecar: `@cfs-batcher/shared/tracing`, one `NodeSDK`.
 *
 * Heavy (sdk-node brings every exporter it supports): never imported by the barrel. Each program's tracing preload
 * reaches it through `startTracing()` (telemetry.ts), which requires this module only when tracing is on.
 *
 * NodeSDK reads the OTEL_* environment itself (exporter, protocol, endpoint, headers, timeouts, sampler, propagators,
 * OTEL_BSP_*, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED, OTEL_LOG_LEVEL). Here is only what it
 * cannot know: the instrumentations, the program's default service name and version, the pod identity from the
 * downward API, that metrics and logs are not ours to export unless asked for, where its diagnostics go, and how long
 * the last flush may take. Tracing is best effort: an unreachable collector costs a bounded queue and a DEBUG line,
 * never a blocked or crashed main loop.
 */
import { type Attributes, type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { getStringFromEnv, setGlobalErrorHandler } from '@opentelemetry/core';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { getLogger } from './logger';
import {
  isUntracedPath,
  telemetryDisabled,
  tracesDestination,
  type Telemetry,
  type TelemetryOptions,
} from './telemetry';

export type { Telemetry, TelemetryOptions } from './telemetry';

/**
 * The last spans' flush on SIGTERM: a program must exit within 2 s of SIGTERM even with a dead collector (the image
 * check measured 2.2-3.5 s with a 3 s bound), so the flush gives up after 1.2 s.
 */
export const SHUTDOWN_TIMEOUT_MS = 1200;

type Env = Record<string, string | undefined>;

const log = getLogger('telemetry');
let active: Telemetry | undefined;

/**
 * The resource NodeSDK starts from: its default (telemetry.sdk.*), the program's service name and version, and the
 * pod identity from the downward API. The SDK's env detector merges over it, so OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES still win.
 */
export function baseResourceAttributes(
  opts: Pick<TelemetryOptions, 'serviceName' | 'serviceVersion'>,
  env: Env = process.env,
): Attributes {
  const attrs: Attributes = { [ATTR_SERVICE_NAME]: opts.serviceName };
  if (opts.serviceVersion) attrs[ATTR_SERVICE_VERSION] = opts.serviceVersion;
  // the semantic-convention resource keys; the package lists them only in its incubating entry, which may change
  // in a minor release, so they are spelled out here
  const fromEnv: [string, string | undefined][] = [
    ['k8s.pod.name', env.POD_NAME],
    ['k8s.namespace.name', env.POD_NAMESPACE],
    ['k8s.container.name', env.CONTAINER_NAME],
  ];
  for (const [key, value] of fromEnv) if (value && value.trim()) attrs[key] = value.trim();
  return attrs;
}

/**
 * The SDK's diagnostics as our log lines: its warnings and errors are set-up problems (an unknown exporter, sampler
 * or protocol, an invalid OTEL_BSP_* value, spans dropped on a full queue) and become WARN lines. Failed exports go
 * through the global error handler instead, at DEBUG: a dead collector is not our error.
 */
function diagBridge(): DiagLogger {
  const warn = (message: string, ...args: unknown[]): void => log.warn(joined(message, args));
  const debug = (message: string, ...args: unknown[]): void => log.debug(joined(message, args));
  return { error: warn, warn, info: debug, debug, verbose: debug };
}

function exceptionText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}

function joined(message: string, args: unknown[]): string {
  return args.length > 0 ? `${message} ${args.map(String).join(' ')}` : message;
}

/**
 * With OTEL_LOG_LEVEL set the SDK writes its own console diagnostics at that level (as its docs describe); otherwise
 * its warnings become our WARN lines.
 */
function routeDiagnostics(): void {
  if (getStringFromEnv('OTEL_LOG_LEVEL') === undefined) diag.setLogger(diagBridge(), DiagLogLevel.WARN);
  setGlobalErrorHandler((err) => log.debug(`Trace export failed: ${exceptionText(err)}`));
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
    active = inactive('Tracing off: OTEL_SDK_DISABLED=true');
    return active;
  }
  try {
    active = startSdk(opts);
  } catch (err) {
    log.error(`Tracing could not start, continuing without it: ${err instanceof Error ? err.message : String(err)}`);
    active = inactive('Tracing off: it could not start (the ERROR line above says why)');
  }
  return active;
}

function inactive(status: string): Telemetry {
  return {
    enabled: false,
    status,
    shutdown: () => {
      active = undefined;
      return Promise.resolve();
    },
  };
}

/**
 * NodeSDK starts an OTLP metrics and an OTLP logs pipeline when OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER are unset.
 * The programs' metrics are Prometheus (/metrics) and their logs go to stdout, so unset means none here; set, the SDK
 * reads the variable as usual (and warns about a value it does not know).
 */
function noneUnlessSet<T>(variable: 'OTEL_METRICS_EXPORTER' | 'OTEL_LOGS_EXPORTER'): T[] | undefined {
  return getStringFromEnv(variable) === undefined ? [] : undefined;
}

function startSdk(opts: TelemetryOptions): Telemetry {
  routeDiagnostics();
  const sdk = new NodeSDK({
    resource: defaultResource().merge(resourceFromAttributes(baseResourceAttributes(opts))),
    autoDetectResources: opts.autoDetectResources ?? true,
    spanProcessors: opts.spanProcessors, // tests only; otherwise from OTEL_TRACES_EXPORTER
    metricReaders: noneUnlessSet('OTEL_METRICS_EXPORTER'),
    logRecordProcessors: noneUnlessSet('OTEL_LOGS_EXPORTER'),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => isUntracedPath(req.url),
        requireParentforOutgoingSpans: opts.requireParentForOutgoing ?? false,
      }),
      // one span per route handler; `middleware - <anonymous>` spans (json parser, metrics) carry nothing
      ...(opts.express ? [new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] })] : []),
    ],
  });
  sdk.start();
  const bound = opts.shutdownTimeoutMs ?? SHUTDOWN_TIMEOUT_MS;
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    status: `Tracing on: service ${opts.serviceName}, traces go to ${tracesDestination()}`,
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
