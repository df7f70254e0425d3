/**
 * A real Prometheus server for the tests (Debian's `prometheus` package): listens on 127.0.0.1 at a free port,
 * keeps its TSDB in a temp folder, and is queried through its HTTP API. Fails the test when not installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { stopChild } from '../helpers/stop-child';

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}
export interface PromAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
  activeAt: string;
}

export class Prometheus {
  private readonly tmp = makeTempDir('prometheus');
  private child: ChildProcess | null = null;
  private output = '';
  url = '';

  /** Starts with this scrape config and these rule groups; resolves once /-/ready answers 200. */
  async start(o: { scrapeConfigs: unknown[]; ruleGroups?: unknown[]; evaluationInterval?: string }): Promise<void> {
    const rulesFile = path.join(this.tmp.dir, 'rules.yaml');
    writeFileSync(rulesFile, YAML.stringify({ groups: o.ruleGroups ?? [] }));
    const configFile = path.join(this.tmp.dir, 'prometheus.yml');
    const interval = o.evaluationInterval ?? '1s';
    writeFileSync(
      configFile,
      YAML.stringify({
        global: { scrape_interval: interval, evaluation_interval: interval },
        rule_files: [rulesFile],
        scrape_configs: o.scrapeConfigs,
      }),
    );
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    const child = spawn(
      'prometheus',
      [
        `--config.file=${configFile}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--storage.tsdb.path=${path.join(this.tmp.dir, 'data')}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-4000)));
    child.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-4000)));
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (err) =>
        reject(new Error(`prometheus could not run (${err.message}); install it (Debian: apt-get install prometheus)`)),
      );
      child.once('exit', (code) => reject(new Error(`prometheus exited (${code}): ${this.output}`)));
    });
    failed.catch(() => undefined);
    await Promise.race([
      waitFor(async () => (await request(`${this.url}/-/ready`, { timeoutMs: 1000 })).status === 200, {
        timeoutMs: 20_000,
        what: 'prometheus ready',
      }),
      failed,
    ]);
  }

  private async api<T>(p: string): Promise<T> {
    const r = await request(`${this.url}${p}`, { timeoutMs: 5000 });
    if (r.status !== 200 || !('json' in r))
      throw new Error(`prometheus ${p}: ${r.status} ${'text' in r ? r.text : r.error}`);
    return (r.json as { data: T }).data;
  }

  /** An instant query's vector (an empty array when it selects nothing). */
  async query(expr: string): Promise<Sample[]> {
    const d = await this.api<{ resultType: string; result: Sample[] }>(
      `/api/v1/query?query=${encodeURIComponent(expr)}`,
    );
    return d.resultType === 'vector' ? d.result : [];
  }

  async alerts(): Promise<PromAlert[]> {
    return (await this.api<{ alerts: PromAlert[] }>('/api/v1/alerts')).alerts;
  }

  /** Newest rule group evaluation time (ms), or 0 before the first one. */
  async lastRuleEvaluation(): Promise<number> {
    const d = await this.api<{ groups: { lastEvaluation: string }[] }>('/api/v1/rules');
    return Math.max(0, ...d.groups.map((g) => Date.parse(g.lastEvaluation) || 0));
  }

  async targets(): Promise<{ labels: Record<string, string>; health: string; lastError: string }[]> {
    return (
      await this.api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] }>(
        '/api/v1/targets',
      )
    ).activeTargets;
  }

  async stop(): Promise<void> {
    await stopChild(this.child);
    this.tmp.cleanup();
  }
}
