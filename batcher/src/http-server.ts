/**
 * The batcher's HTTP server (METRICS_PORT): `GET /metrics` (prom-client's registry) and `GET /explain/{id}` (why a
 * component is not configured yet: explain-service.ts). Read-only: other methods on these paths get 405, any
 * other path 404. Every answer but the metrics is JSON, so an id can never come back as markup.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import { errorMessage, listen } from '@cfs-batcher/shared';
import type { Explainer } from './explain-service';
import { logMain } from './log';

export function createBatcherApp(registry: Registry, explainer?: Explainer): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  app.get('/metrics', (_req, res) => {
    registry
      .metrics()
      .then((body) => res.status(200).type(registry.contentType).send(body))
      .catch((err: unknown) => res.status(500).type('text/plain').send(String(err)));
  });

  if (explainer) {
    app.get('/explain/:id', async (req: Request<{ id: string }>, res: Response) => {
      const ac = new AbortController();
      // A client that hangs up frees its CFS lookup slot at once.
      res.on('close', () => {
        if (!res.writableFinished) ac.abort();
      });
      const reply = await explainer.explain(req.params.id, ac.signal);
      if (reply.retryAfterS !== undefined) res.set('Retry-After', String(reply.retryAfterS));
      res.status(reply.status).json(reply.body);
    });
  }

  const readOnly = (_req: Request, res: Response): void => {
    res.set('Allow', 'GET, HEAD').status(405).json({ error: 'method_not_allowed', reason: 'only GET is served' });
  };
  app.all('/metrics', readOnly);
  if (explainer) app.all('/explain/:id', readOnly);

  app.use((_req: Request, res: Response) => {
    res
      .status(404)
      .json({ error: 'not_found', reason: `not found: try /metrics${explainer ? ' or /explain/{id}' : ''}` });
  });
  // A path express cannot decode (bad percent-encoding) or any other failure: JSON, and nothing of the request.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown }).status;
    const code = typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
    if (code === 500) logMain.error('HTTP request failed', { error: errorMessage(err) });
    // The router's decoding failure is a URIError; its message repeats the path, so it is not passed on.
    const reason = err instanceof URIError ? 'the path is not valid percent-encoding' : 'the request failed';
    res.status(code).json({ error: code === 500 ? 'internal_error' : 'bad_request', reason });
  });
  return app;
}

/**
 * Serves the batcher's HTTP endpoints (`/explain/{id}` only with an explainer); resolves once listening. A listen
 * error rejects (the caller treats it as fatal).
 */
export function serveMetrics(
  registry: Registry,
  port: number,
  host = '0.0.0.0',
  explainer?: Explainer,
): Promise<http.Server> {
  const server = http.createServer(createBatcherApp(registry, explainer));
  return listen(server, port, host).then(() => server);
}

export function serverPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}
