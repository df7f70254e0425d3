/**
 * How a picked fault acts on a request: before the handler (nothing committed), after it (committed, answer
 * replaced or lost), or as a late commit (held, committed later whatever the client's socket does).
 */
import type { NextFunction, Request, Response } from 'express';
import { isControlRequest } from './bypass';
import type { FaultAction, FaultRegistry } from './faults';
import { problemBody } from './problem';

type Action<T extends FaultAction['type']> = Extract<FaultAction, { type: T }>;

const HTML_PAGE = '<html><head><title>Error</title></head><body><h1>Service Unavailable</h1></body></html>\n';

/** Answers with the fault's status and body (problem+json by default). */
function sendStatus(req: Request, res: Response, action: Action<'status'> | Action<'invalid-json'>): void {
  if (action.type === 'invalid-json') {
    res
      .status(action.status ?? 200)
      .type('application/json')
      .send('{"components": [{"id": "x1000c0s0b0n0", ');
    return;
  }
  const body = action.body ?? 'problem';
  if (body === 'empty') {
    res.status(action.status).end();
  } else if (body === 'problem') {
    const detail = action.detail ?? `fault injected for ${req.method} ${req.path}`;
    res
      .status(action.status)
      .type('application/problem+json')
      .send(JSON.stringify(problemBody(action.status, action.title ?? 'Injected fault', detail)));
  } else if (body === 'html') {
    res.status(action.status).type('text/html').send(HTML_PAGE);
  } else {
    res
      .status(action.status)
      .type('application/json')
      .send(JSON.stringify(body === 'null' ? null : body));
  }
}

/** Drops top-level keys from a JSON object answer (anything else passes unchanged). */
function omitKeys(chunk: unknown, keys: string[]): unknown {
  if (typeof chunk !== 'string' && !Buffer.isBuffer(chunk)) return chunk;
  try {
    const doc = JSON.parse(chunk.toString()) as unknown;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return chunk;
    for (const k of keys) delete (doc as Record<string, unknown>)[k];
    return JSON.stringify(doc);
  } catch {
    return chunk;
  }
}

/** Phase before: the handler never runs. */
function actBefore(reg: FaultRegistry, req: Request, res: Response, next: NextFunction, action: FaultAction): void {
  switch (action.type) {
    case 'latency': {
      const t = setTimeout(next, action.ms);
      res.on('close', () => clearTimeout(t));
      return;
    }
    case 'hang':
      reg.holdSocket(req.socket);
      return;
    case 'reset':
      req.socket.destroy();
      return;
    case 'status':
    case 'invalid-json':
      sendStatus(req, res, action);
      return;
    default:
      next(); // omit-keys and late-commit are handled elsewhere
  }
}

/** Phase after: the handler runs (and commits); its answer is then replaced, delayed or lost. */
function interceptAnswer(reg: FaultRegistry, req: Request, res: Response, action: FaultAction): void {
  const origEnd = res.end;
  const replaced = function (this: Response, ...args: unknown[]): Response {
    res.end = origEnd;
    const end = (...a: unknown[]): Response => (origEnd as (...x: unknown[]) => Response).apply(res, a);
    switch (action.type) {
      case 'latency':
        setTimeout(() => end(...args), action.ms).unref();
        return res;
      case 'hang':
        reg.holdSocket(req.socket);
        return res;
      case 'reset':
        req.socket.destroy();
        return res;
      case 'omit-keys': {
        const body = omitKeys(args[0], action.keys);
        if (body !== args[0] && !res.headersSent) res.setHeader('content-length', Buffer.byteLength(body as string));
        return end(body);
      }
      case 'status':
      case 'invalid-json':
        if (!res.headersSent) {
          res.removeHeader('content-length');
          res.removeHeader('content-type');
        }
        sendStatus(req, res, action);
        return res;
      default:
        return end(...args);
    }
  };
  res.end = replaced as typeof res.end;
}

/** Before the body parser: picks the rule that fires and applies it. */
export function faultMiddleware(reg: FaultRegistry) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.locals.receivedMs = reg.now();
    if (req.path.startsWith('/__sim') || isControlRequest(req)) return next();
    const picked = reg.pick(req.method, req.path);
    if (!picked) return next();
    const { action } = picked;
    res.locals.fault = action.type;
    res.locals.faultPhase =
      action.type === 'omit-keys' ? 'after' : action.type === 'late-commit' ? 'late' : picked.phase;
    if (action.type === 'late-commit') {
      res.locals.lateCommit = action;
      return next();
    }
    if (res.locals.faultPhase === 'after') {
      interceptAnswer(reg, req, res, action);
      return next();
    }
    actBefore(reg, req, res, next, action);
  };
}

/** After the body parser: a late commit holds the request ms, then lets it through whatever the socket did. */
export function lateCommitGate(reg: FaultRegistry) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const action = res.locals.lateCommit as Action<'late-commit'> | undefined;
    if (!action) return next();
    const client = action.client ?? 'hang';
    if (client === 'reset') req.socket.destroy();
    if (client === 'hang') {
      reg.holdSocket(req.socket);
      res.end = () => res; // the answer at commit is swallowed
    }
    reg.later(() => next(), action.ms);
  };
}
