/**
 * A transparent HTTP proxy between the batcher and the simulator that records, for every POST /v3/sessions, the
 * state of each targeted component just before the session is created (what the invariants need and the simulator's
 * history lacks). It can also refuse connections outright (listener closed), for the "connection refused" outage.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { MemberSnapshot } from './invariants';

interface RawLayer {
  status?: unknown;
}
interface RawComponent {
  id?: unknown;
  desired_config?: unknown;
  tags?: unknown;
  state?: unknown;
  desired_state?: unknown;
}

/** Pure: what the invariants compare, computed from a CFS component record read with config and state details. */
export function snapshotOf(c: RawComponent): MemberSnapshot {
  const desired = Array.isArray(c.desired_state) ? (c.desired_state as RawLayer[]) : [];
  const pending = desired.flatMap((l, i) => (typeof l?.status === 'string' && l.status.toLowerCase() === 'pending' ? [String(i)] : []));
  const state = Array.isArray(c.state) ? (c.state as RawLayer[]) : [];
  const last = state[state.length - 1];
  const tags = c.tags && typeof c.tags === 'object' ? { ...(c.tags as Record<string, string>) } : {};
  return {
    desired_config: typeof c.desired_config === 'string' ? c.desired_config : undefined,
    pending_layers: pending.join(','),
    latest_status: typeof last?.status === 'string' ? last.status : '',
    tags,
  };
}

function readBody(req: http.IncomingMessage, limit = 8 << 20): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) req.destroy(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Outage applied by the proxy to every forwarded request (the snapshot reads go around it). */
export type ProxyFault = { kind: 'status'; status: number } | { kind: 'latency'; ms: number } | null;

export class RecordingProxy {
  fault: ProxyFault = null;
  /** Session name -> member snapshots taken right before its POST was forwarded. */
  readonly members = new Map<string, Record<string, MemberSnapshot>>();
  /** Arrival time (epoch ms) of every POST /v3/sessions, in order. */
  readonly postTimes: number[] = [];
  readonly counts = { requests: 0, posts: 0, upstreamErrors: 0 };
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly upstreamAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  port = 0;

  /** `upstream` is the simulator's origin, e.g. http://127.0.0.1:1234 (no /v3). */
  constructor(private readonly upstream: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/v3`;
  }

  async listen(port = 0): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5000;
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Closes the listener and every open connection: new connections are refused until `accept()`. */
  async refuse(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  /** Listens again on the same port. */
  async accept(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.refuse();
    this.upstreamAgent.destroy();
  }

  private async snapshot(ids: string[]): Promise<Record<string, MemberSnapshot>> {
    const out: Record<string, MemberSnapshot> = {};
    const qs = new URLSearchParams({ ids: ids.join(','), config_details: 'true', state_details: 'true' });
    const body = await this.fetchJson(`${this.upstream}/v3/components?${qs.toString()}`);
    const list = (body as { components?: RawComponent[] } | undefined)?.components ?? [];
    for (const c of list) if (typeof c.id === 'string') out[c.id] = snapshotOf(c);
    return out;
  }

  private fetchJson(url: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { agent: this.upstreamAgent, timeout: 5000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (err) {
            reject(err as Error);
          }
        });
      });
      req.on('timeout', () => req.destroy(new Error('snapshot timeout')));
      req.on('error', reject);
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.counts.requests++;
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      res.destroy();
      return;
    }
    const fault = this.fault;
    if (fault?.kind === 'status') {
      res.writeHead(fault.status, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Injected outage', status: fault.status, detail: 'injected by the e2e proxy' }));
      return;
    }
    if (fault?.kind === 'latency') {
      // Hold the request; a client that times out first closes the socket and nothing is forwarded.
      const gone = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), fault.ms);
        res.once('close', () => {
          clearTimeout(t);
          resolve(true);
        });
      });
      if (gone) return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/v3/sessions') {
      this.counts.posts++;
      this.postTimes.push(Date.now());
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { name?: unknown; ansible_limit?: unknown };
        if (typeof parsed.name === 'string' && typeof parsed.ansible_limit === 'string') {
          const ids = parsed.ansible_limit.split(',').filter((s) => s !== '');
          // Bypass any injected fault: the snapshot goes to the simulator's own view, not through its fault rules.
          this.members.set(parsed.name, await this.snapshot(ids).catch(() => ({})));
        }
      } catch {
        /* not JSON: the simulator will answer 400 and no session exists */
      }
    }
    const up = http.request(
      `${this.upstream}${req.url ?? '/'}`,
      { method: req.method, headers: { ...req.headers, host: new URL(this.upstream).host }, agent: this.upstreamAgent },
      (ures) => {
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        ures.pipe(res);
        ures.on('error', () => res.destroy());
      },
    );
    up.on('error', () => {
      this.counts.upstreamErrors++;
      res.destroy();
    });
    // A client that gives up (timeout) closes its socket: stop waiting upstream too.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(body);
  }
}
