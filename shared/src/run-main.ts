/**
 * The programs' common ending: a configuration error or a port in use is one clear line and a known exit code,
 * not `Unexpected error occurred` with a stack.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from './settings';
import { exitAfterLogs, getLogger } from './logger';

/** Exit code of a program that refuses its configuration (bad variable, unreadable file, bad argument). */
export const EXIT_CONFIG_ERROR = 2;
/** Exit code of a program that cannot listen on its port (in use, not allowed). */
export const EXIT_LISTEN_ERROR = 1;

const log = getLogger('main');

/** A listen failure from node (EADDRINUSE, EACCES, ...), and the setting that chose the port when it is known. */
export type ListenError = NodeJS.ErrnoException & { port?: number; address?: string; setting?: string };

export function isListenError(err: unknown): err is ListenError {
  return err instanceof Error && (err as NodeJS.ErrnoException).syscall === 'listen';
}

/**
 * Marks a listen failure of `listening` with the setting that chose the port (`METRICS_PORT`, `--port`), so the
 * start-up line tells the operator what to change.
 */
export function withListenSetting<T>(listening: Promise<T>, setting: string): Promise<T> {
  return listening.catch((err: unknown) => {
    if (isListenError(err) && err.setting === undefined) err.setting = setting;
    throw err;
  });
}

/** The one line and exit code for a start-up failure the operator fixes outside the program; null for a bug. */
export function startFailure(err: unknown): { line: string; code: number } | null {
  if (err instanceof ConfigError) return { line: `Configuration error: ${err.message}`, code: EXIT_CONFIG_ERROR };
  if (isListenError(err)) {
    const where = `${err.address ?? ''}${err.port !== undefined ? `:${err.port}` : ''}` || 'the configured port';
    const inUse = err.code === 'EADDRINUSE';
    const why = inUse ? `port ${err.port ?? '?'} is already in use` : err.message;
    const fix = err.setting === undefined ? '' : inUse ? `; set ${err.setting} to a free port` : ` (${err.setting})`;
    return { line: `Cannot listen on ${where}: ${err.code ?? 'error'}, ${why}${fix}`, code: EXIT_LISTEN_ERROR };
  }
  return null;
}

/**
 * Log a start-up failure as one ERROR line and exit with its code once logged (true). Returns false (and does nothing) for any other
 * error, which the caller handles as it always did.
 */
export function exitOnStartFailure(err: unknown): boolean {
  const failure = startFailure(err);
  if (!failure) return false;
  log.error(failure.line);
  exitAfterLogs(failure.code);
  return true;
}

/**
 * Run a program's main: a number it returns becomes the exit code; a configuration or listen error ends it with one
 * line (exitOnStartFailure); anything else goes to `onError` (by default logged with its stack, exit 1).
 */
export function runMain(main: () => Promise<number | void>, onError?: (err: unknown) => void): void {
  main().then(
    (code) => {
      if (typeof code === 'number') process.exitCode = code;
    },
    (err: unknown) => {
      if (exitOnStartFailure(err)) return;
      if (onError) return onError(err);
      log.error(`Unexpected error occurred: ${(err as Error)?.message ?? String(err)}`, {
        stack: (err as Error)?.stack,
      });
      exitAfterLogs(1);
    },
  );
}

/** `server.listen` as a promise that rejects with node's listen error (Express 5's `app.listen` hides it). */
export function listen(server: Server, port: number, host?: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
