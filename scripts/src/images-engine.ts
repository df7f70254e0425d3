/**
 * The container engine as the build and the check need it: docker or podman (the same CLI for these verbs), and
 * buildah for building only. Every call is a child process with a timeout, so a hung engine fails instead of hanging.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Engines that run containers (the check). */
export type Engine = 'docker' | 'podman';
/** Engines that build images. */
export type BuildEngine = Engine | 'buildah';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `engine args...`; never throws for a non-zero exit (the caller decides). `env` is passed explicitly so a
 * test's PATH (stub engines) reaches the child. */
export function engineCall(engine: BuildEngine, args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      engine,
      args,
      { env: process.env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr) || (err && code === 1 ? String(err.message) : ''),
        });
      },
    );
  });
}

/** The first of `order` that answers `info` (a docker client without a daemon does not count), or null. */
export async function detectEngine<E extends BuildEngine>(order: E[]): Promise<E | null> {
  for (const e of order) if ((await engineCall(e, ['info'], 20_000))?.code === 0) return e;
  return null;
}

export async function imageExists(engine: BuildEngine, image: string): Promise<boolean> {
  const args = engine === 'buildah' ? ['inspect', '--type', 'image', image] : ['image', 'inspect', image];
  return (await engineCall(engine, args, 20_000)).code === 0;
}

const UNITS: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9 };

/** Image size in bytes as the engine reports it (uncompressed, all layers; buildah only says "162 MB"). */
export async function imageSize(engine: BuildEngine, image: string): Promise<number> {
  if (engine === 'buildah') {
    const r = await engineCall(engine, ['images', '--json', image], 20_000);
    const m = /^([\d.]+)\s*([kKMG]?B)$/.exec(
      r.code === 0 ? ((JSON.parse(r.stdout) as { size?: string }[])[0]?.size ?? '') : '',
    );
    return m ? Number(m[1]) * (UNITS[(m[2] as string).toUpperCase()] ?? NaN) : NaN;
  }
  const r = await engineCall(engine, ['image', 'inspect', '--format', '{{.Size}}', image], 20_000);
  return r.code === 0 ? Number(r.stdout.trim()) : NaN;
}

/**
 * Extra `run` flags this machine needs. Some sandboxes refuse the rlimits the engine asks the OCI runtime to set
 * (`setrlimit ... operation not permitted`) or crun's cgroup mode: then retry with runc and limits at or below ours.
 * Returns [] when the engine's defaults work, the first fallback that works otherwise, or throws with both errors.
 */
export async function runFlags(engine: Engine, image: string, node: string): Promise<string[]> {
  const probe = (flags: string[]) =>
    engineCall(engine, ['run', '--rm', ...flags, '--entrypoint', node, image, '-e', '0'], 60_000);
  const first = await probe([]);
  if (first.code === 0) return [];
  const fallback = ['--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
  const second = engine === 'podman' ? await probe(fallback) : null;
  if (second?.code === 0) return fallback;
  throw new Error(
    `${engine} cannot run ${image}: ${first.stderr.trim()}${second ? ` | with ${fallback.join(' ')}: ${second.stderr.trim()}` : ''}`,
  );
}

/** A running container's PID 1 as the host sees it: host pid, its pid inside the container (NSpid's last field), uid. */
export async function pidOne(
  engine: Engine,
  name: string,
): Promise<{ hostPid: number; pidInContainer: number | null; uid: number | null }> {
  const r = await engineCall(engine, ['inspect', '--format', '{{.State.Pid}}', name], 20_000);
  const hostPid = Number(r.stdout.trim());
  let status = '';
  try {
    status = readFileSync(`/proc/${hostPid}/status`, 'utf8');
  } catch {
    // a remote daemon: the host's /proc does not have it
  }
  const ns = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
  const uid = /^Uid:\s*(\d+)/m.exec(status)?.[1];
  return {
    hostPid,
    pidInContainer: ns ? Number(ns[ns.length - 1]) : null,
    uid: uid === undefined ? null : Number(uid),
  };
}

export interface ExitState {
  running: boolean;
  exitCode: number;
  oomKilled: boolean;
}

export async function exitState(engine: Engine, name: string): Promise<ExitState> {
  const r = await engineCall(
    engine,
    ['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}} {{.State.OOMKilled}}', name],
    20_000,
  );
  const [running, code, oom] = r.stdout.trim().split(' ');
  return { running: running === 'true', exitCode: Number(code), oomKilled: oom === 'true' };
}

export async function logsOf(engine: Engine, name: string): Promise<string> {
  const r = await engineCall(engine, ['logs', name], 20_000);
  return `${r.stdout}${r.stderr}`;
}
