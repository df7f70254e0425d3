/**
 * The CFS v3 route table: each path and method handed to the module that answers it. Kept apart from the
 * middleware pipeline (app.ts) so the order of faults, validation and error replies is read in one place and
 * the served API in another.
 */
import type { Express, NextFunction, Request, Response } from 'express';
import * as components from './components';
import * as configurations from './configurations';
import type { SimDeps } from './deps';
import * as options from './options';
import { ProblemError } from './problem';
import * as sessions from './sessions';
import type { MemberSnapshot } from './snapshot';

export const VERSION = { major: '1', minor: '31', patch: '1' };

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

/** Registers the version, health and CFS v3 routes on the app, after the middleware that has to run first. */
export function addCfsRoutes(app: Express, deps: SimDeps): void {
  const { state, operator, now } = deps;
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
}
