/**
 * Process and HTTP plumbing for the benchmarks (the bench measures other processes, never itself). Processes are
 * the shared spawner's (proc.ts); the benches wait with waitFor (wait.ts).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { Proc, REPO_ROOT } from './proc';

export const ROOT = REPO_ROOT;

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs `node <script>`; keeps the last 2000 output lines (for errors and the ready line). */
export function startNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
  prefix: string[] = [],
): Proc {
  return new Proc({ name: script.split('/')[0] ?? script, script, args, env, nodeArgs, prefix, keepLines: 2000 });
}

/** Starts the simulator on an ephemeral port with a scenario file; resolves with its origin. */
export async function startSim(scenarioFile: string): Promise<{ child: Proc; origin: string }> {
  const child = startNode('cfs-sim/dist/main.js', ['--port', '0', '--scenario', scenarioFile], { LOG_LEVEL: 'INFO' });
  const ready = await child.waitForLine(
    (l) => typeof l.json?.port === 'number',
    120_000,
    0,
    () => (child.alive ? null : `simulator exited: ${child.tail(5)}`),
  );
  return { child, origin: `http://127.0.0.1:${Number(ready.json?.port)}` };
}

export function httpJson(
  method: string,
  url: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<{ status: number; json: unknown; ms: number }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {};
    const req = http.request(url, { method, agent: false, headers }, (res) => {
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

/** The 1, 5 and 15-minute load averages as `uptime` prints them: every figure is read beside the load it ran under. */
export function loadAverageText(): string {
  return os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}
