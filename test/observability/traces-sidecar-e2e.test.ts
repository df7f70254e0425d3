/**
 * Sidecar traces end to end: the built sidecar, run with OTEL_EXPORTER_OTLP_PROTOCOL=http/json, exports valid OTLP
 * whose traced requests carry no Express `middleware - ...` spans (noise in Jaeger).
 * Needs `npm run build` first (npm test does it).
 */
import path from 'node:path';
import { request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { spawnNode } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { SPAN_KIND_SERVER, startReceiver } from './otlp-receiver';
import { otlpTraceProblems } from './otlp-schema';
import { startCfs, tracedProgramsLifecycle } from './traced-programs';

tracedProgramsLifecycle();

describe('sidecar traces', () => {
  const tmp = makeTempDir('traces-sidecar');
  afterAll(() => tmp.cleanup());

  test('a traced request is a server span with no Express middleware spans under it', async () => {
    const receiver = await startReceiver();
    const cfs = await startCfs();
    try {
      const port = await freePort();
      const sidecar = spawnNode({
        name: 'sidecar-traced',
        script: 'sidecar-health/dist/main.js',
        env: {
          OTEL_SDK_DISABLED: undefined,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', // the other protocol NodeSDK offers over HTTP, checked here
          OTEL_BSP_SCHEDULE_DELAY: '200',
          HEALTH_PORT: String(port),
          HEALTH_HOST: '127.0.0.1',
          HEARTBEAT_PATH: path.join(tmp.dir, 'heartbeat.json'),
          CFS_API_URL: cfs.url,
        },
      });
      // /status and an unknown path are traced (the probe paths are not); each runs Express's middleware stack.
      await waitFor(async () => (await request(`http://127.0.0.1:${port}/status`)).status > 0 || !sidecar.alive, {
        timeoutMs: 20_000,
        what: 'the sidecar answering',
      });
      for (const p of ['/status', '/no-such-path', '/status']) await request(`http://127.0.0.1:${port}${p}`);
      expect((await sidecar.stop(10_000)).code).toBe(0); // shutdown flushes the spans
      const spans = receiver.spans.filter((x) => x.resource['service.name'] === 'cfs-batcher-health');
      expect(spans.filter((x) => x.kind === SPAN_KIND_SERVER).length).toBeGreaterThan(0);
      expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/json']));
      expect(receiver.bodies.flatMap((b) => otlpTraceProblems(b))).toEqual([]);
      expect(spans.filter((x) => /^middleware - /.test(x.name)).map((x) => x.name)).toEqual([]);
    } finally {
      await cfs.close();
      await receiver.close();
    }
  }, 60_000);
});
