/**
 * Per-request latency of a keep-alive client against each transport mode (the delayed-ACK wait of
 * the 'python' mode, transport.ts):
 *   node cfs-sim/dist/transport-bench.js [requests=200]
 * Prints the median and p90 per mode, and the same without keep-alive.
 */
import http from 'node:http';
import { setLogSilent } from '@cfs-batcher/shared';
import { createSimulator } from './simulator';
import { TRANSPORTS, type Transport } from './transport';

function get(url: string, agent: http.Agent | false): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      })
      .on('error', reject);
  });
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

async function measure(transport: Transport, n: number, keepAlive: boolean): Promise<{ median: number; p90: number }> {
  const sim = createSimulator({
    transport,
    operator: { paused: true },
    generate: { components: 50, configurations: 1 },
  });
  const { url } = await sim.listen(0);
  const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await get(`${url}/components/x3000c0s0b0n0`, agent);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    if (agent) agent.destroy();
    await sim.close();
  }
  times.sort((a, b) => a - b);
  return { median: pct(times, 0.5), p90: pct(times, 0.9) };
}

async function main(): Promise<void> {
  setLogSilent(true);
  const n = Number(process.argv[2] ?? 200);
  for (const keepAlive of [true, false]) {
    for (const t of TRANSPORTS) {
      const r = await measure(t, n, keepAlive);
      console.log(
        `${t.padEnd(8)} keep-alive=${String(keepAlive).padEnd(5)} ${n} requests: median ${r.median.toFixed(2)} ms, p90 ${r.p90.toFixed(2)} ms`,
      );
    }
  }
}

if (require.main === module) void main();
