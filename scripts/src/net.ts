/** Ports on this machine: one picked by the kernel, or a check that a given one is free. */
import net from 'node:net';

/**
 * An ephemeral port picked by the kernel (listen on port 0, read it, close). For programs that cannot be told
 * "port 0 and print it"; the tiny race window is acceptable on a test or developer machine.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** True when nothing listens on `port` (all interfaces, as the programs bind). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}
