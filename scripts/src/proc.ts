/**
 * The one spawner of the local pod, the benchmarks and the test suite: run a built program
 * (`node <pkg>/dist/main.js`), keep its output lines (optionally also in a log file), wait on lines and exits with
 * deadlines, signal it, and make sure nothing outlives the parent. Supervised containers (container.ts) are the
 * kubelet model's own children, not these.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { waitFor } from './wait';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface LogLine {
  at: number;
  stream: 'stdout' | 'stderr';
  text: string;
  /** The parsed line when it is a JSON object (the programs' JSON log lines). */
  json?: Record<string, unknown>;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

export interface SpawnOptions {
  name: string;
  /** Script path relative to the repo root, e.g. batcher/dist/main.js. */
  script: string;
  args?: string[];
  env?: Record<string, string | undefined>;
  nodeArgs?: string[];
  /** A command node runs under, which execs it (same pid): the bench's container limits (pod-limits.ts). */
  prefix?: string[];
  /** Echo the child's lines to the test output (debugging). */
  echo?: boolean;
  /** Lines kept in memory (oldest dropped). */
  keepLines?: number;
  /** Also append every output line to this file (the local pod's logs folder). */
  logFile?: string;
}

const live = new Set<Proc>();

/** Environment every child gets: enough to run node, nothing from the developer's shell that could change behaviour. */
function baseEnv(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'SYSTEMROOT'];
  const out: Record<string, string> = { OTEL_SDK_DISABLED: 'true' };
  for (const k of keep) if (process.env[k] !== undefined) out[k] = process.env[k];
  return out;
}

export class Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly startedAt = Date.now();
  readonly lines: LogLine[] = [];
  private readonly keep: number;
  private readonly log: WriteStream | null;
  private exitInfo: ExitInfo | null = null;
  readonly exited: Promise<ExitInfo>;
  linesSeen = 0;

  constructor(o: SpawnOptions) {
    this.name = o.name;
    this.keep = o.keepLines ?? 20_000;
    this.log = o.logFile ? createWriteStream(o.logFile, { flags: 'w' }) : null;
    const env: Record<string, string> = baseEnv();
    for (const [k, v] of Object.entries(o.env ?? {})) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    const [command, ...prefixArgs] = [...(o.prefix ?? []), process.execPath];
    const argv = [...prefixArgs, ...(o.nodeArgs ?? []), path.join(REPO_ROOT, o.script), ...(o.args ?? [])];
    this.child = spawn(command, argv, {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.log?.end();
        this.exitInfo = { code, signal, at: Date.now() };
        live.delete(this);
        resolve(this.exitInfo);
      });
      this.child.once('error', (err) => {
        this.push('stderr', `spawn error: ${err.message}`, o.echo);
        this.exitInfo = { code: -1, signal: null, at: Date.now() };
        live.delete(this);
        resolve(this.exitInfo);
      });
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      let buf = '';
      this.child[stream]?.setEncoding('utf8');
      this.child[stream]?.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          this.push(stream, buf.slice(0, nl), o.echo);
          buf = buf.slice(nl + 1);
        }
        // A line longer than 1 MiB is not a log line we will match on; keep memory bounded.
        if (buf.length > 1 << 20) buf = buf.slice(-4096);
      });
    }
  }

  private push(stream: 'stdout' | 'stderr', text: string, echo?: boolean): void {
    let json: Record<string, unknown> | undefined;
    if (text.startsWith('{')) {
      try {
        const v = JSON.parse(text) as unknown;
        if (v && typeof v === 'object' && !Array.isArray(v)) json = v as Record<string, unknown>;
      } catch {
        json = undefined;
      }
    }
    this.lines.push({ at: Date.now(), stream, text, json });
    this.linesSeen++;
    this.log?.write(`${text}\n`);
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
    if (echo) console.log(`[${this.name}] ${text}`);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get exit(): ExitInfo | null {
    return this.exitInfo;
  }

  get alive(): boolean {
    return this.exitInfo === null;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.alive) this.child.kill(sig);
  }

  /** Lines whose text matches, optionally only those after `since` (epoch ms). */
  find(match: RegExp | ((l: LogLine) => boolean), since = 0): LogLine[] {
    const pred = typeof match === 'function' ? match : (l: LogLine) => match.test(l.text);
    return this.lines.filter((l) => l.at >= since && pred(l));
  }

  /** The first line that matches; `abort` may end the wait early (its reason is in the error). */
  async waitForLine(
    match: RegExp | ((l: LogLine) => boolean),
    timeoutMs: number,
    since = 0,
    abort?: () => string | null,
  ): Promise<LogLine> {
    return waitFor(() => this.find(match, since)[0], {
      timeoutMs,
      intervalMs: 50,
      what: `${this.name}: log line ${String(match)}`,
      abort,
    });
  }

  async waitForExit(timeoutMs: number): Promise<ExitInfo> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name} (pid ${this.pid}) did not exit within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`. A stopped (SIGSTOP) process is continued so it can see the SIGTERM. */
  async stop(graceMs = 3000): Promise<ExitInfo> {
    if (!this.alive) return this.exitInfo as ExitInfo;
    this.signal('SIGTERM');
    this.signal('SIGCONT');
    try {
      return await this.waitForExit(graceMs);
    } catch {
      this.signal('SIGKILL');
      return this.waitForExit(5000);
    }
  }

  /** The tail of the output, for failure messages. */
  tail(n = 40): string {
    return this.lines
      .slice(-n)
      .map((l) => `[${this.name} ${l.stream}] ${l.text}`)
      .join('\n');
  }
}

export function spawnNode(o: SpawnOptions): Proc {
  return new Proc(o);
}

/** Kills every child still running (afterAll, also after a failed test). */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop(2000).catch(() => undefined)));
}

export function liveCount(): number {
  return live.size;
}

/** Reads a field of /proc/<pid>/status in kB (VmHWM = peak RSS, VmRSS = current); null when gone. */
export function procStatusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Last resort for a crashed jest worker: children must not outlive the test process. */
process.once('exit', () => {
  for (const p of live) {
    try {
      p.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});
