/**
 * What the trace tests run the built programs against: the simulator behind a front server that records each request's
 * traceparent, the batcher's environment, and the hooks every trace test file needs.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';
import { setLogSilent } from '@cfs-batcher/shared';
import { killAll } from '../helpers/proc';
import { REPO } from './promql';

const BATCHER_MAIN = path.join(REPO, 'batcher', 'dist', 'main.js');

/** The simulator behind a front server that records each request's traceparent header. */
export async function startCfs(): Promise<{
  sim: Simulator;
  url: string;
  seen: { method: string; url: string; traceparent?: string }[];
  close: () => Promise<void>;
}> {
  const scenario = JSON.parse(readFileSync(path.join(REPO, 'cfs-sim', 'scenarios', 'demo.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  scenario.options = { ...(scenario.options as object), batcher_check_interval: 1, batch_window: 1 };
  const sim = createSimulator({ scenario: scenario as never });
  await sim.listen(0, '127.0.0.1'); // starts the operator; requests arrive through the front server below
  const seen: { method: string; url: string; traceparent?: string }[] = [];
  const front = http.createServer((req, res) => {
    if (seen.length < 10_000)
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        traceparent: req.headers.traceparent as string | undefined,
      });
    sim.app(req, res);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  const port = (front.address() as AddressInfo).port;
  return {
    sim,
    url: `http://127.0.0.1:${port}/v3`,
    seen,
    close: async () => {
      front.closeAllConnections();
      await new Promise<void>((r) => front.close(() => r()));
      await sim.close();
    },
  };
}

export function batcherEnv(
  cfsUrl: string,
  otlp: string,
  heartbeatDir: string,
  metricsPort: number,
): Record<string, string | undefined> {
  return {
    OTEL_SDK_DISABLED: undefined, // the e2e helpers turn tracing off by default
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    CFS_API_URL: cfsUrl,
    CFS_RETRY_BUDGET_MS: '2000',
    HEARTBEAT_PATH: path.join(heartbeatDir, 'heartbeat.json'),
    METRICS_PORT: String(metricsPort),
    POD_NAME: 'cfs-batcher-e2e-0',
    POD_NAMESPACE: 'services',
    CONTAINER_NAME: 'cfs-batcher',
  };
}

/** Silences the in-process simulator, insists on a build, and stops whatever a test left running. */
export function tracedProgramsLifecycle(): void {
  beforeAll(() => {
    setLogSilent(true); // the in-process simulator's own log lines
    if (!existsSync(BATCHER_MAIN)) throw new Error(`${BATCHER_MAIN} is missing: run npm run build first`);
  });
  afterAll(async () => {
    await killAll();
    setLogSilent(false);
  });
}
