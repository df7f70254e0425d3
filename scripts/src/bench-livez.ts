/** Sidecar /livez latency under a steady 200 requests/s (open loop: requests are sent on schedule, not after answers). */
import http from 'node:http';
import { benchScenario, startBenchPod } from './bench-pod';
import { waitFor } from './wait';
import { percentile } from './bench-stats';

export interface LivezRun {
  rate: number;
  seconds: number;
  sent: number;
  ok: number;
  failed: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** What the failed answers said (status and reason), counted: a failure must be explained. */
  failures: Record<string, number>;
}

function probeOnce(port: number): Promise<{ ms: number; status: number; why?: string }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/livez', agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        let why: string | undefined;
        if (res.statusCode !== 200) {
          try {
            why = `${res.statusCode} ${(JSON.parse(body) as { reason?: string }).reason ?? '?'}`;
          } catch {
            why = `${res.statusCode} (not JSON)`;
          }
        }
        resolve({ ms, status: res.statusCode ?? 0, why });
      });
    });
    req.setTimeout(3000, () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, status: 0, why: `error ${err.code ?? err.message}` }),
    );
  });
}

export async function runLivezBench(o: { rate: number; seconds: number }): Promise<LivezRun> {
  const pod = await startBenchPod({ scenario: benchScenario() });
  try {
    await waitFor(() => pod.batcher.snapshot.startupPassed, {
      what: 'the batcher to pass its startup probe',
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const total = o.rate * o.seconds;
    const results: Array<{ ms: number; status: number; why?: string }> = [];
    const inflight: Promise<void>[] = [];
    const t0 = Date.now();
    let sent = 0;
    // Bounded: exactly `total` requests, spread over `seconds`.
    while (sent < total) {
      const due = Math.min(total, Math.floor(((Date.now() - t0) / 1000) * o.rate) + 1);
      for (; sent < due; sent++) inflight.push(probeOnce(pod.healthPort).then((r) => void results.push(r)));
      await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.all(inflight);
    const ok = results.filter((r) => r.status === 200);
    const lat = results.map((r) => r.ms);
    return {
      rate: o.rate,
      seconds: o.seconds,
      sent,
      ok: ok.length,
      failed: results.length - ok.length,
      p50Ms: percentile(lat, 50),
      p99Ms: percentile(lat, 99),
      maxMs: percentile(lat, 100),
      failures: results.reduce<Record<string, number>>((acc, r) => {
        if (r.why) acc[r.why] = (acc[r.why] ?? 0) + 1;
        return acc;
      }, {}),
    };
  } finally {
    await pod.close();
  }
}
