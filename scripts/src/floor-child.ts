/**
 * The least a Node program must do for the batcher's job, for the runtime-floor bench (bench-floor.ts): read every
 * enabled pending component with its details from CFS, page by page over one keep-alive connection, and keep the
 * id, configuration and status of each (what batching needs at the least). No logging, metrics, heartbeat,
 * validation or sessions. Prints its peak RSS (VmHWM) as one JSON line.
 *
 * Usage: node floor-child.js <CFS base URL, e.g. http://127.0.0.1:PORT/v3> [page size, default 1000] | bare
 */
import { readFileSync } from 'node:fs';

function peakMb(): number {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface Page {
  components: { id: string; desired_config?: string; configuration_status?: string }[];
  next?: { after_id?: string } | null;
}

async function main(base: string, pageSize: number): Promise<void> {
  if (base === 'bare') {
    process.stdout.write(`${JSON.stringify({ peakMb: peakMb(), held: 0 })}\n`);
    return;
  }
  // Loaded here so that `bare` measures node itself.
  const http = await import('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (url: string): Promise<string> =>
    new Promise((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        })
        .on('error', reject);
    });
  const held = new Map<string, { configuration: string; status: string }>();
  let after: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const q = `enabled=true&status=pending&config_details=true&state_details=true&limit=${pageSize}${after ? `&after_id=${encodeURIComponent(after)}` : ''}`;
    const p = JSON.parse(await get(`${base}/components?${q}`)) as Page;
    for (const c of p.components)
      held.set(c.id, { configuration: c.desired_config ?? '', status: c.configuration_status ?? '' });
    after = p.next?.after_id;
    if (!after) break;
  }
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ peakMb: peakMb(), held: held.size })}\n`);
}

main(process.argv[2] ?? 'bare', Number(process.argv[3] ?? 1000)).catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exitCode = 1;
});
