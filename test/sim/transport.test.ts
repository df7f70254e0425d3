/**
 * Transport modes and the control port. 'python' = Nagle on and headers written before the body, so a
 * keep-alive client receives the header block alone (then waits for its delayed ACK); 'nodelay' = one write.
 * No timing is asserted: the latency figures are measured by cfs-sim/src/transport-bench.ts (README).
 */
import net from 'node:net';
import { createSimulator, type Simulator, type Transport } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim } from './helpers';

/** Sends `n` keep-alive GETs on one raw socket; per answer, whether its first data chunk held only the headers. */
async function headerOnlyFirstChunks(
  port: number,
  path: string,
  n: number,
): Promise<{ headerOnly: number; bodies: string[] }> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
  let headerOnly = 0;
  const bodies: string[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const answer = await new Promise<string>((resolve, reject) => {
        let buf = '';
        let first = true;
        const onData = (c: Buffer) => {
          const s = c.toString();
          if (first && s.endsWith('\r\n\r\n')) headerOnly++;
          first = false;
          buf += s;
          const head = buf.indexOf('\r\n\r\n');
          const len = /content-length: (\d+)/i.exec(buf);
          if (head >= 0 && len && buf.length >= head + 4 + Number(len[1])) {
            sock.off('data', onData);
            sock.off('error', onError);
            resolve(buf.slice(head + 4));
          }
        };
        const onError = (e: Error) => {
          sock.off('data', onData);
          reject(e);
        };
        sock.on('data', onData);
        sock.once('error', onError);
        sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`);
      });
      bodies.push(answer);
    }
  } finally {
    sock.destroy();
  }
  return { headerOnly, bodies };
}

describe.each<[Transport, boolean]>([
  ['nodelay', false],
  ['python', true],
])('transport %s', (transport, split) => {
  let sim: Simulator;
  let port: number;
  beforeEach(async () => {
    sim = makeSim({ transport });
    addComponent(sim, 'x1');
    port = (await sim.listen(0)).port;
  });
  afterEach(() => sim.close());

  it('serves correct answers over keep-alive', async () => {
    const r = await headerOnlyFirstChunks(port, '/v3/components/x1', 3);
    for (const b of r.bodies) expect(JSON.parse(b)).toMatchObject({ id: 'x1', configuration_status: 'pending' });
    expect(sim.transport).toBe(transport);
  });

  it(split ? 'writes the headers apart from the body' : 'writes headers and body in one piece', async () => {
    // Bounded: 20 requests. With Nagle on, once the connection leaves quick-ACK mode the body waits for an ACK.
    const r = await headerOnlyFirstChunks(port, '/v3/components/x1', 20);
    if (split) expect(r.headerOnly).toBeGreaterThan(0);
    else expect(r.headerOnly).toBe(0);
  });
});

describe('transport and control port from a scenario', () => {
  it('server.transport and server.controlPort: the control port bypasses faults, stats and outages', async () => {
    const sim = createSimulator({
      scenario: { server: { transport: 'python', controlPort: 0 } },
      operator: { paused: true },
    });
    try {
      expect(sim.transport).toBe('python');
      const { url, controlPort } = await sim.listen(0);
      const ctl = `http://127.0.0.1:${controlPort}`;
      sim.faults.add({ match: '* *', action: { type: 'status', status: 503 } });
      expect((await fetch(`${url}/options`)).status).toBe(503);
      expect((await fetch(`${ctl}/v3/options`)).status).toBe(200);
      expect(sim.stats.snapshot().total).toBe(1);
      await sim.startOutage();
      await expect(fetch(`${url}/options`)).rejects.toThrow();
      const h = await fetch(`${ctl}/__sim/sessions-history`);
      expect(h.status).toBe(200);
      await sim.endOutage();
    } finally {
      await sim.close();
    }
  });
});
