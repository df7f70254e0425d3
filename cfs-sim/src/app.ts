/**
 * The express application's pipeline: stats and fault middleware, the /__sim control API, the optional spec
 * validator, then the CFS v3 routes (routes.ts) and the problem+json replies for what they reject.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { getLogger } from '@cfs-batcher/shared';
import { controlRouter, type ControlDeps } from './control';
import { ProblemError, problemBody } from './problem';
import { addCfsRoutes } from './routes';
import { memberSnapshots } from './snapshot';
import type { SimDeps } from './deps';

const log = getLogger('cfs-sim');

/** Query params the spec types as boolean: connexion accepts True/TRUE, ajv only true/false, so normalise. */
const BOOLEAN_QUERY = new Set(['enabled', 'state_details', 'config_details', 'in_use', 'drop_branches']);

function normaliseBooleans(req: Request, _res: Response, next: NextFunction): void {
  const q = { ...(req.query as Record<string, unknown>) };
  let changed = false;
  for (const k of Object.keys(q)) {
    if (!BOOLEAN_QUERY.has(k) || typeof q[k] !== 'string') continue;
    const v = q[k];
    if (v === '') delete q[k];
    else if (/^(true|false)$/i.test(v)) q[k] = v.toLowerCase();
    else continue;
    changed = true;
  }
  if (changed) Object.defineProperty(req, 'query', { value: q, writable: true, configurable: true, enumerable: true });
  next();
}

export interface AppOptions {
  /** Patched spec document; validation is off when undefined. */
  spec?: Record<string, unknown>;
}

export function createApp(deps: SimDeps & ControlDeps, opts: AppOptions = {}): express.Express {
  const { state, faults, stats } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(stats.middleware());
  app.use(faults.middleware());
  app.use(express.json({ limit: '20mb', strict: false }));
  // Members as they were when the POST arrived (a late commit lands later, the batcher decided on these).
  app.post('/v3/sessions', (req: Request, res: Response, next: NextFunction) => {
    const limit = (req.body as { ansible_limit?: unknown } | undefined)?.ansible_limit;
    if (typeof limit === 'string')
      res.locals.members = memberSnapshots(
        state,
        limit.split(',').filter((h) => h !== ''),
      );
    next();
  });
  app.use(faults.commitGate());
  app.use('/__sim', controlRouter(deps));
  app.use(normaliseBooleans);
  if (opts.spec) {
    app.use(
      OpenApiValidator.middleware({
        apiSpec: opts.spec as never,
        validateRequests: true,
        validateResponses: true,
        ignoreUndocumented: true,
        ignorePaths: /^\/__sim/,
        $refParser: { mode: 'dereference' },
      }),
    );
  }

  addCfsRoutes(app, deps);

  app.use((req: Request, res: Response) => {
    res
      .status(404)
      .type('application/problem+json')
      .send(JSON.stringify(problemBody(404, 'Not Found', `No route for ${req.method} ${req.path}`)));
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const body = errorToProblem(err);
    if (body.status >= 500) log.error('request failed', { method: req.method, path: req.path, error: body.detail });
    else
      log.debug('request rejected', { method: req.method, path: req.path, status: body.status, detail: body.detail });
    if (isValidatorError(err))
      deps.validationErrors.push({ method: req.method, path: req.path, status: body.status, detail: body.detail });
    res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
  });
  return app;
}

function isValidatorError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'errors' in err && Array.isArray(err.errors);
}

function errorToProblem(err: unknown) {
  if (err instanceof ProblemError) return err.body();
  const e = err as {
    status?: number;
    statusCode?: number;
    type?: string;
    message?: string;
    errors?: Array<{ path?: string; message?: string }>;
  };
  // body-parser: malformed JSON is the real server's "Error parsing the data provided."
  if (e?.type === 'entity.parse.failed') return problemBody(400, 'Bad Request', 'Error parsing the data provided.');
  const status = e?.status ?? e?.statusCode ?? 500;
  const detail = e?.errors?.length
    ? e.errors.map((x) => `${x.path ?? ''} ${x.message ?? ''}`.trim()).join('; ')
    : (e?.message ?? String(err));
  const title =
    status === 400
      ? 'Bad Request'
      : status === 404
        ? 'Not Found'
        : status === 405
          ? 'Method Not Allowed'
          : 'Internal Server Error';
  return problemBody(status, title, detail);
}
