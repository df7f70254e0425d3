import type { ChildProcess } from 'node:child_process';

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited (at once if it already had). */
export async function stopChild(c: ChildProcess | null | undefined, graceMs = 5000): Promise<void> {
  if (!c || c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(t);
}
