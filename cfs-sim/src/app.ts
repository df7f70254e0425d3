/** The express application: fault + stats middleware, optional spec validator, CFS v3 routes, /__sim control API. */
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { getLogger } from '@cfs-batcher/shared';
import * as components from './components';
import * as configurations from './configurations';
import { controlRouter, type ControlDeps } from './control';
import * as options from './options';
import { ProblemError, problemBody } from './problem';
import * as sessions from './sessions';
import { memberSnapshots, type MemberSnapshot } from './snapshot';
import type { SimDeps } from './deps';

const log = getLogger('cfs-sim');

export const VERSION = { major: '1', minor: '31', patch: '1' };

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

type Handler = (req: Request, res: Response) => void;

/** Wraps a route so a thrown ProblemError becomes its problem+json reply. */
function route(fn: Handler) {
  return (req: Request, res: Response, next: NextFunction): void => {
    try {
      fn(req, res);
    } catch (err) {
      next(err);
    }
  };
}

function param(req: Request, name: string): string {
  return String(req.params[name]);
}

export interface AppOptions {
  /** Patched spec document; validation is off when undefined. */
  spec?: Record<string, unknown>;
}

export function createApp(deps: SimDeps & ControlDeps, opts: AppOptions = {}): express.Express {
  const { state, operator, faults, stats, now } = deps;
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

  const version = route((_req, res) => void res.json(VERSION));
  app.get('/', version);
  app.get('/versions', version);
  app.get('/v3', version);
  app.get(
    '/healthz',
    route((_req, res) => {
      const ok = state.health.db_status === 'ok' && state.health.kafka_status === 'ok';
      res.status(ok ? 200 : 503).json(state.health);
    }),
  );

  app.get(
    '/v3/options',
    route((_req, res) => void res.json(options.getOptions(state))),
  );
  app.patch(
    '/v3/options',
    route((req, res) => void res.json(options.patchOptions(state, req.body))),
  );

  app.get(
    '/v3/components',
    route((req, res) => void res.json(components.listComponents(state, req.query as never))),
  );
  app.put(
    '/v3/components',
    route((req, res) => void res.json(components.putComponents(state, req.body, now()))),
  );
  app.patch(
    '/v3/components',
    route((req, res) => void res.json(components.patchComponents(state, req.body, now()))),
  );
  app.get(
    '/v3/components/:component_id',
    route((req, res) => void res.json(components.getComponent(state, param(req, 'component_id'), req.query as never))),
  );
  app.put(
    '/v3/components/:component_id',
    route((req, res) => void res.json(components.putComponent(state, param(req, 'component_id'), req.body, now()))),
  );
  app.patch(
    '/v3/components/:component_id',
    route((req, res) => void res.json(components.patchComponent(state, param(req, 'component_id'), req.body, now()))),
  );
  app.delete(
    '/v3/components/:component_id',
    route((req, res) => {
      const id = param(req, 'component_id');
      if (!state.deleteComponent(id)) throw components.notFound(id);
      res.status(204).end();
    }),
  );

  app.get(
    '/v3/sessions',
    route((req, res) => void res.json(sessions.listSessions(state, req.query as never, now()))),
  );
  app.post(
    '/v3/sessions',
    route((req, res) => {
      const s = sessions.createSession(state, req.body, now());
      const fault =
        res.locals.fault === undefined ? undefined : `${String(res.locals.faultPhase)}:${String(res.locals.fault)}`;
      operator.onCreated(s, {
        fault,
        receivedMs: res.locals.receivedMs as number | undefined,
        members: res.locals.members as Record<string, MemberSnapshot> | undefined,
      });
      res.status(201).json(sessions.sessionView(state, s));
    }),
  );
  app.delete(
    '/v3/sessions',
    route((req, res) => {
      const names = sessions.deleteSessions(state, req.query, now());
      for (const n of names) operator.onDeleted(n);
      res.json({ session_ids: names });
    }),
  );
  app.get(
    '/v3/sessions/:session_name',
    route((req, res) => {
      const s = state.sessions.get(param(req, 'session_name'));
      if (!s) throw sessions.sessionNotFound(param(req, 'session_name'));
      res.json(sessions.sessionView(state, s));
    }),
  );
  app.delete(
    '/v3/sessions/:session_name',
    route((req, res) => {
      const name = param(req, 'session_name');
      if (!state.deleteSession(name)) throw sessions.sessionNotFound(name);
      operator.onDeleted(name);
      res.status(204).end();
    }),
  );

  app.get(
    '/v3/configurations',
    route((req, res) => void res.json(configurations.listConfigurations(state, req.query as never))),
  );
  app.get(
    '/v3/configurations/:configuration_id',
    route((req, res) => void res.json(configurations.getConfiguration(state, param(req, 'configuration_id')))),
  );
  app.put(
    '/v3/configurations/:configuration_id',
    route((req, res) => {
      res.json(configurations.putConfiguration(state, param(req, 'configuration_id'), req.body, req.query, now()));
    }),
  );
  app.delete(
    '/v3/configurations/:configuration_id',
    route((req, res) => {
      const name = param(req, 'configuration_id');
      const inUse = [...state.components.values()].some((c) => c.desired_config === name);
      if (inUse)
        throw ProblemError.badRequest(
          `Configuration ${name} is in use by one or more components`,
          'Configuration is in use',
        );
      if (!state.deleteConfiguration(name)) throw configurations.configurationNotFound(name);
      res.status(204).end();
    }),
  );

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
