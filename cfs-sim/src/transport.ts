/**
 * How the simulator's HTTP server writes its answers. 'nodelay' (default): TCP_NODELAY and one write per answer,
 * as Envoy and gunicorn do. 'python': Nagle left on and the headers written before the body, as Python's
 * http.server does; a keep-alive client then waits for its own delayed ACK (~40 ms) on every answer.
 */
import http from 'node:http';

export const TRANSPORTS = ['nodelay', 'python'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Headers go out on their own write before the first body byte. */
function splitWrites(res: http.ServerResponse): void {
  const end = res.end;
  const write = res.write;
  const flushFirst = (): void => {
    if (!res.headersSent) res.flushHeaders();
  };
  res.write = function (this: http.ServerResponse, ...args: unknown[]) {
    flushFirst();
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof res.write;
  res.end = function (this: http.ServerResponse, ...args: unknown[]) {
    flushFirst();
    return (end as (...a: unknown[]) => http.ServerResponse).apply(this, args);
  } as typeof res.end;
}

export function createHttpServer(transport: Transport, listener: http.RequestListener): http.Server {
  if (transport === 'nodelay') return http.createServer({ noDelay: true }, listener);
  const server = http.createServer({ noDelay: false }, (req, res) => {
    splitWrites(res);
    listener(req, res);
  });
  server.on('connection', (sock) => sock.setNoDelay(false));
  return server;
}
