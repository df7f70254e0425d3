/**
 * A real Alertmanager for the tests (Debian's `prometheus-alertmanager` package): listens on 127.0.0.1 at a free
 * port, gossip off, keeps its state in a temp folder, and is driven through its v2 API. Fails the test when not
 * installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { stopChild } from '../helpers/stop-child';

export const ALERTMANAGER_BINARY = 'prometheus-alertmanager';

/** One alert as GET /api/v2/alerts returns it (the fields the tests read). */
export interface AmAlert {
  fingerprint: string;
  labels: Record<string, string>;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; inhibitedBy: string[]; silencedBy: string[] };
}

export class Alertmanager {
  private readonly tmp = makeTempDir('alertmanager');
  private child: ChildProcess | null = null;
  private output = '';
  url = '';

  /** Starts with this configuration file; resolves once /-/ready answers 200. */
  async start(configFile: string): Promise<void> {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    const child = spawn(
      ALERTMANAGER_BINARY,
      [
        `--config.file=${configFile}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--storage.path=${path.join(this.tmp.dir, 'data')}`,
        '--cluster.listen-address=', // no gossip: one instance, no port of its own
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    const keep = (d: Buffer) => (this.output = (this.output + d.toString()).slice(-4000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (err) =>
        reject(
          new Error(
            `${ALERTMANAGER_BINARY} could not run (${err.message}); install it (Debian: apt-get install prometheus-alertmanager)`,
          ),
        ),
      );
      child.once('exit', (code) => reject(new Error(`${ALERTMANAGER_BINARY} exited (${code}): ${this.output}`)));
    });
    failed.catch(() => undefined);
    await Promise.race([
      waitFor(async () => (await request(`${this.url}/-/ready`, { timeoutMs: 1000 })).status === 200, {
        timeoutMs: 20_000,
        what: 'alertmanager ready',
      }),
      failed,
    ]);
  }

  /** POST /api/v2/alerts: firing alerts with these label sets (Alertmanager resolves them after resolve_timeout). */
  async post(labelSets: Record<string, string>[]): Promise<void> {
    const body = labelSets.map((labels) => ({ labels, annotations: {} }));
    const r = await request(`${this.url}/api/v2/alerts`, { method: 'POST', body, timeoutMs: 5000 });
    if (r.status !== 200) throw new Error(`POST /api/v2/alerts: ${r.status} ${'text' in r ? r.text : r.error}`);
  }

  /** GET /api/v2/alerts: every alert, inhibited and silenced ones included, with its status. */
  async alerts(): Promise<AmAlert[]> {
    const r = await request(`${this.url}/api/v2/alerts`, { timeoutMs: 5000 });
    if (r.status !== 200 || !('json' in r)) {
      throw new Error(`GET /api/v2/alerts: ${r.status} ${'text' in r ? r.text : r.error}`);
    }
    return r.json as AmAlert[];
  }

  async stop(): Promise<void> {
    await stopChild(this.child);
    this.tmp.cleanup();
  }
}
