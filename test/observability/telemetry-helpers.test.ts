/**
 * The pure parts of telemetry.ts: resource attributes, untraced paths, when tracing is on, the error attributes of
 * a CFS client error, and the bounded shutdown.
 */
import { ERROR_ATTR, errorAttributes, isUntracedPath, telemetryDisabled, tracingEnabled } from '@cfs-batcher/shared';
import { baseResourceAttributes, boundedShutdown } from '@cfs-batcher/shared/tracing';

describe('pure helpers', () => {
  test('resource attributes carry the service and the downward-API pod identity', () => {
    const attrs = baseResourceAttributes(
      { serviceName: 'cfs-batcher', serviceVersion: '1.2.3' },
      { POD_NAME: 'cfs-batcher-abc', POD_NAMESPACE: 'services', CONTAINER_NAME: 'cfs-batcher' },
    );
    expect(attrs).toEqual({
      'service.name': 'cfs-batcher',
      'service.version': '1.2.3',
      'k8s.pod.name': 'cfs-batcher-abc',
      'k8s.namespace.name': 'services',
      'k8s.container.name': 'cfs-batcher',
    });
    expect(baseResourceAttributes({ serviceName: 'x' }, { POD_NAME: '  ' })).toEqual({ 'service.name': 'x' });
  });

  test('probe and scrape paths are not traced, other paths are', () => {
    expect(isUntracedPath('/livez')).toBe(true);
    expect(isUntracedPath('/metrics?x=1')).toBe(true);
    expect(isUntracedPath('/readyz')).toBe(true);
    expect(isUntracedPath('/startupz')).toBe(true);
    expect(isUntracedPath('/status')).toBe(false);
    expect(isUntracedPath('/v3/sessions')).toBe(false);
    expect(isUntracedPath(undefined)).toBe(false);
  });

  test('OTEL_SDK_DISABLED is read case-insensitively', () => {
    expect(telemetryDisabled({ OTEL_SDK_DISABLED: 'TRUE' })).toBe(true);
    expect(telemetryDisabled({ OTEL_SDK_DISABLED: 'false' })).toBe(false);
    expect(telemetryDisabled({})).toBe(false);
  });

  test('tracing is on only with an exporter configured and the SDK not disabled', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: ' ' })).toBe(false);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(
      false,
    );
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  test('errorAttributes reads the CFS client error fields', () => {
    const err = Object.assign(new Error('404 Not Found'), {
      kind: 'http',
      status: 404,
      method: 'GET',
      url: 'http://cfs/v3/sessions/batcher-1',
      route: '/v3/sessions/{session_name}',
    });
    expect(errorAttributes(err)).toEqual({
      [ERROR_ATTR.cfsErrorKind]: 'http',
      [ERROR_ATTR.httpStatus]: 404,
      [ERROR_ATTR.httpMethod]: 'GET',
      [ERROR_ATTR.urlFull]: 'http://cfs/v3/sessions/batcher-1',
      [ERROR_ATTR.cfsRoute]: '/v3/sessions/{session_name}',
      [ERROR_ATTR.errorType]: '404',
    });
    expect(errorAttributes(new TypeError('x'))).toEqual({ [ERROR_ATTR.errorType]: 'TypeError' });
    expect(errorAttributes('boom')).toEqual({});
  });

  test('boundedShutdown gives up on a stop that never finishes', async () => {
    let settled = false;
    await boundedShutdown(() => new Promise<void>(() => undefined), 50).then(() => (settled = true));
    expect(settled).toBe(true);
    await expect(boundedShutdown(() => Promise.reject(new Error('x')), 50)).resolves.toBeUndefined();
  });
});
