/**
 * One container of the image check, run as the manifest runs it: read-only root, uid 65532, no capabilities, no
 * new privileges; and the waits and the stop around it.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { type Engine, engineCall, exitState } from './images-engine';

/** The engine's grace between SIGTERM and SIGKILL: exit code 0 after `stop --time 2` means "exited within 2 s". */
export const STOP_GRACE_SECONDS = 2;
/** The pod's runAsUser and fsGroup. */
export const UID = 65532;

export interface HardenedRun {
  name: string;
  image: string;
  env: Record<string, string>;
  /** `host:container[:ro]` */
  volume: string;
  /** The engine's extra `run` flags (images-engine.ts runFlags). */
  flags: string[];
}

/** Starts the container detached on the host network; when it started, and whether its root is read-only. */
export async function runHardened(engine: Engine, c: HardenedRun): Promise<{ at: number; readOnly: boolean }> {
  const args = ['run', '-d', '--name', c.name, '--network', 'host', '--read-only', '--user', `${UID}:${UID}`];
  args.push('--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '-v', c.volume, ...c.flags);
  if (engine === 'podman') args.push('--read-only-tmpfs=false'); // as Kubernetes: no tmpfs on /tmp, /run either
  for (const [k, v] of Object.entries(c.env)) args.push('-e', `${k}=${v}`);
  const at = performance.now();
  const r = await engineCall(engine, [...args, c.image]);
  if (r.code !== 0) throw new Error(`${engine} run ${c.image}: ${r.stderr.trim()}`);
  const ro = await engineCall(engine, ['inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', c.name]);
  return { at, readOnly: ro.stdout.trim() === 'true' };
}

export function get(port: number, p: string): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, timeout: 1000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** Polls `fn` every 100 ms until it returns a value; fails early when the container has stopped. */
export async function until<T>(
  what: string,
  engine: Engine,
  name: string,
  deadlineMs: number,
  fn: () => Promise<T | null>,
): Promise<T> {
  const end = performance.now() + deadlineMs;
  for (let i = 0; performance.now() < end && i < 10_000; i++) {
    const v = await fn();
    if (v !== null) return v;
    if (i % 10 === 9 && !(await exitState(engine, name)).running)
      throw new Error(`${name} stopped while waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
}

export async function entrypointNode(engine: Engine, image: string): Promise<string> {
  const r = await engineCall(engine, ['image', 'inspect', '--format', '{{json .Config.Entrypoint}}', image]);
  const ep = r.code === 0 ? (JSON.parse(r.stdout) as string[] | null) : null;
  if (!ep?.[0]) throw new Error(`${image}: no ENTRYPOINT (is it built? ${r.stderr.trim()})`);
  return ep[0];
}

/** Stops with SIGTERM and the engine's SIGKILL after STOP_GRACE_SECONDS; returns the time it took and the exit code. */
export async function stop(engine: Engine, name: string): Promise<{ ms: number; exitCode: number }> {
  const t = performance.now();
  const r = await engineCall(engine, ['stop', '--time', String(STOP_GRACE_SECONDS), name], 30_000);
  const ms = performance.now() - t;
  if (r.code !== 0) throw new Error(`${engine} stop ${name}: ${r.stderr.trim()}`);
  return { ms, exitCode: (await exitState(engine, name)).exitCode };
}
