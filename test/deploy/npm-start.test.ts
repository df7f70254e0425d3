/**
 * `npm start` behaves like a program: a SIGINT or SIGTERM to the pid it prints, or to npm's own pid (what systemd,
 * `timeout` or a CI runner signal), stops the local pod and every process under it. The status line names the
 * batcher's schedulable count and CFS's component counts apart, and counts sessions from CFS's history.
 * Linux only (reads /proc for the process tree).
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { report, waitFor } from '../helpers/wait';
import { ROOT } from './manifest-helpers';

/** Every live descendant of `root` (zombies count as gone). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') parent.set(Number(d), Number(ppid));
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0 && out.length < 1000) {
    const p = todo.pop()!;
    for (const [child, pp] of parent) {
      if (pp !== p) continue;
      out.push(child);
      todo.push(child);
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('npm start', () => {
  test.each([
    ['SIGINT', 'the pid it prints'],
    ['SIGTERM', "npm's own pid"],
  ] as const)(
    '%s to %s stops every process',
    async (signal, target) => {
      const npm = spawn('npm', ['start', '--', '--free-ports'], {
        cwd: ROOT,
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
      npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      try {
        const printed = await waitFor(() => Number(/local pod\s+pid (\d+)/.exec(out)?.[1]) || null, {
          timeoutMs: 60_000,
          what: `the local pod pid in:\n${out}`,
        });
        await waitFor(() => /cfs-batcher: started pid \d+/.test(out) && /health-sidecar: started pid \d+/.test(out), {
          timeoutMs: 30_000,
          what: 'both containers started',
        });
        // A status line with a heartbeat in it (printed every 5 s when stdout is not a terminal).
        await waitFor(() => /\| batcher schedulable \d+/.test(out), { timeoutMs: 30_000, what: 'a status line' });
        const tree = [printed, ...descendants(printed)];
        expect(tree.length).toBeGreaterThanOrEqual(4); // local pod, simulator, batcher, sidecar
        const t0 = Date.now();
        process.kill(target === 'the pid it prints' ? printed : npm.pid!, signal);
        const code = await exited;
        await waitFor(() => tree.every((p) => !alive(p)), {
          timeoutMs: 5000,
          intervalMs: 20,
          what: `every process of ${tree.join(' ')} gone`,
        });
        report(`npm start: ${signal} to ${target}: every process gone after ${Date.now() - t0} ms`);
        expect(code).toBe(0);
        expect(out).not.toMatch(/sending SIGKILL/); // everything stopped on its own, inside the stop budget
        const last = /last status: (.*)/.exec(out)?.[1] ?? '';
        expect(last).toMatch(/batcher schedulable \d+/);
        expect(last).toMatch(/batcher sessions in CFS \d+/);
        expect(last).toMatch(/CFS components .*pending \d+/);
      } finally {
        if (npm.exitCode === null) npm.kill('SIGKILL');
      }
    },
    120_000,
  );
});
