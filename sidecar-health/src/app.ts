/**
 * The HTTP face of the sidecar. Every handler only reads the cached evaluation: no file read, no CFS call, so a
 * probe answers in microseconds even on a CPU-throttled node.
 */
import express, { type Express, type Request, type Response } from 'express';
import type { SidecarMetrics } from './metrics';
import type { Evaluation } from './status';

export interface AppState {
  evaluation(): Evaluation | null;
  status(): Record<string, unknown> | null;
  /** The sidecar's own health: its evaluator loop ran recently. */
  selfHealth(): { ok: boolean; message: string };
  /** Readiness: the heartbeat volume can be read. */
  readiness(): { ok: boolean; message: string };
}

export function createApp(state: AppState, metrics: SidecarMetrics): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req: Request, res: Response, next) => {
    res.on('finish', () => metrics.countProbe(req.path, res.statusCode));
    res.set('Cache-Control', 'no-store');
    next();
  });

  const notYet = (res: Response): void => {
    res
      .status(503)
      .json({ live: false, reason: 'starting', message: 'the sidecar has not evaluated the heartbeat yet' });
  };

  app.get('/livez', (_req, res) => {
    const e = state.evaluation();
    if (!e) return notYet(res);
    const v = e.verdict;
    res
      .status(v.live ? 200 : 503)
      .json({ live: v.live, reason: v.reason, message: v.message, evaluated_at: new Date(e.now.wallMs).toISOString() });
  });

  app.get('/startupz', (_req, res) => {
    const e = state.evaluation();
    if (!e) return notYet(res);
    res
      .status(e.startup.ready ? 200 : 503)
      .json({ ready: e.startup.ready, message: e.startup.message, live_reason: e.verdict.reason });
  });

  app.get('/healthz', (_req, res) => {
    const s = state.selfHealth();
    res.status(s.ok ? 200 : 503).json(s);
  });

  app.get('/readyz', (_req, res) => {
    const r = state.readiness();
    res.status(r.ok ? 200 : 503).json(r);
  });

  app.get('/status', (_req, res) => {
    const s = state.status();
    if (!s) return notYet(res);
    res.status(200).json(s);
  });

  app.get('/metrics', async (_req, res) => {
    res.set('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ message: 'not found: try /livez, /startupz, /healthz, /readyz, /status or /metrics' });
  });
  return app;
}
