/**
 * The container engine as the image check needs it (docker or podman: the same CLI for these verbs). Every call is a
 * child process with a timeout, so a hung engine fails the check instead of hanging it.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

export type Engine = 'docker' | 'podman';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `engine args...`; never throws for a non-zero exit (the caller decides). */
export function engineCall(engine: Engine, args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(engine, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (err && code === 1 ? String(err.message) : '') });
    });
  });
}

/** The first engine that answers `info` (a docker client without a daemon does not count), or null. */
export async function detectEngine(prefer?: string): Promise<Engine | null> {
  const order: Engine[] = prefer === 'docker' || prefer === 'podman' ? [prefer] : ['docker', 'podman'];
  for (const e of order) if ((await engineCall(e, ['info'], 20_000).catch(() => null))?.code === 0) return e;
  return null;
}

export async function imageExists(engine: Engine, image: string): Promise<boolean> {
  return (await engineCall(engine, ['image', 'inspect', image], 20_000)).code === 0;
}

/** Image size in bytes as the engine reports it (uncompressed, all layers). */
export async function imageSize(engine: Engine, image: string): Promise<number> {
  const r = await engineCall(engine, ['image', 'inspect', '--format', '{{.Size}}', image], 20_000);
  return r.code === 0 ? Number(r.stdout.trim()) : NaN;
}

/**
 * Extra `run` flags this machine needs. Some sandboxes refuse the rlimits the engine asks the OCI runtime to set
 * (`setrlimit ... operation not permitted`) or crun's cgroup mode: then retry with runc and limits at or below ours.
 * Returns [] when the engine's defaults work, the first fallback that works otherwise, or throws with both errors.
 */
export async function runFlags(engine: Engine, image: string, node: string): Promise<string[]> {
  const probe = (flags: string[]) => engineCall(engine, ['run', '--rm', ...flags, '--entrypoint', node, image, '-e', '0'], 60_000);
  const first = await probe([]);
  if (first.code === 0) return [];
  const fallback = ['--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
  const second = engine === 'podman' ? await probe(fallback) : null;
  if (second?.code === 0) return fallback;
  throw new Error(`${engine} cannot run ${image}: ${first.stderr.trim()}${second ? ` | with ${fallback.join(' ')}: ${second.stderr.trim()}` : ''}`);
}

/** The host pid of a running container's PID 1, and what that process sees as its own pid (NSpid's last field). */
export async function pidOne(engine: Engine, name: string): Promise<{ hostPid: number; pidInContainer: number | null }> {
  const r = await engineCall(engine, ['inspect', '--format', '{{.State.Pid}}', name], 20_000);
  const hostPid = Number(r.stdout.trim());
  let pidInContainer: number | null = null;
  try {
    const ns = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${hostPid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/);
    pidInContainer = ns ? Number(ns[ns.length - 1]) : null;
  } catch {
    // a remote daemon: the host's /proc does not have it
  }
  return { hostPid, pidInContainer };
}

export interface ExitState {
  running: boolean;
  exitCode: number;
  oomKilled: boolean;
}

export async function exitState(engine: Engine, name: string): Promise<ExitState> {
  const r = await engineCall(engine, ['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}} {{.State.OOMKilled}}', name], 20_000);
  const [running, code, oom] = r.stdout.trim().split(' ');
  return { running: running === 'true', exitCode: Number(code), oomKilled: oom === 'true' };
}

export async function logsOf(engine: Engine, name: string): Promise<string> {
  const r = await engineCall(engine, ['logs', name], 20_000);
  return `${r.stdout}${r.stderr}`;
}
