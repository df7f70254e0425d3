/** Process and HTTP plumbing for the benchmarks (the bench measures other processes, never itself). */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface Child {
  proc: ChildProcess;
  lines: string[];
  exited: boolean;
  stop(): Promise<void>;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs `node <script>`; keeps the last 2000 output lines (for errors and the ready line). */
export function startNode(script: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeArgs, path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', OTEL_SDK_DISABLED: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: Child = {
    proc,
    lines: [],
    exited: false,
    stop: async () => {
      if (child.exited) return;
      proc.kill('SIGTERM');
      proc.kill('SIGCONT');
      for (let i = 0; i < 50 && !child.exited; i++) await sleep(100);
      if (!child.exited) proc.kill('SIGKILL');
      for (let i = 0; i < 50 && !child.exited; i++) await sleep(100);
    },
  };
  for (const s of [proc.stdout, proc.stderr]) {
    let buf = '';
    s?.setEncoding('utf8');
    s?.on('data', (c: string) => {
      buf += c;
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      child.lines.push(...parts);
      if (child.lines.length > 2000) child.lines.splice(0, child.lines.length - 2000);
    });
  }
  proc.once('exit', () => (child.exited = true));
  return child;
}

export async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined, stepMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    await sleep(stepMs);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

/** Starts the simulator on an ephemeral port with a scenario file; resolves with its origin. */
export async function startSim(scenarioFile: string): Promise<{ child: Child; origin: string }> {
  const child = startNode('cfs-sim/dist/main.js', ['--port', '0', '--scenario', scenarioFile], { LOG_LEVEL: 'INFO' });
  const origin = await waitUntil('the simulator to listen', 120_000, () => {
    if (child.exited) throw new Error(`simulator exited: ${child.lines.slice(-5).join('\n')}`);
    for (const l of child.lines) {
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/v3"/.exec(l);
      if (m) return m[1];
    }
    return undefined;
  });
  return { child, origin };
}

export function httpJson(method: string, url: string, body?: unknown, timeoutMs = 10_000): Promise<{ status: number; json: unknown; ms: number }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(url, { method, agent: false, headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, json, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Peak (VmHWM) or current (VmRSS) resident set of a process, in MB; null once it is gone. */
export function rssMb(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}
