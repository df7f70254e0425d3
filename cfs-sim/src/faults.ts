/**
 * Fault injection: rules that match method + path and make the next N / every Nth / windowed requests fail in a
 * chosen way (status with or without a problem body, empty or null 200, invalid JSON, latency, hang, socket reset).
 * The first matching rule that fires wins. /__sim paths are never faulted.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Socket } from 'node:net';
import { z } from 'zod';
import { problemBody } from './problem';

const methodName = z.string().regex(/^(\*|[A-Za-z]+)$/);

export const faultActionSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('status'),
    status: z.number().int().min(100).max(599),
    /** 'problem' (default): RFC 7807 body; 'empty': no body; 'null': JSON null; anything else: sent as JSON. */
    body: z.unknown().optional(),
    title: z.string().optional(),
  }),
  z.strictObject({ type: z.literal('invalid-json'), status: z.number().int().min(100).max(599).optional() }),
  z.strictObject({ type: z.literal('latency'), ms: z.number().int().min(0) }),
  z.strictObject({ type: z.literal('hang') }),
  z.strictObject({ type: z.literal('reset') }),
]);
export type FaultAction = z.infer<typeof faultActionSchema>;

const timeValue = z.union([z.number(), z.string()]);

export const faultRuleSchema = z.strictObject({
  id: z.string().optional(),
  /** 'GET /v3/sessions', 'PATCH /v3/components/{id}', '* /v3/components*', or an object form. */
  match: z.union([
    z.string().min(1),
    z.strictObject({ method: methodName.optional(), path: z.string().optional(), pathRegex: z.string().optional() }),
  ]),
  action: faultActionSchema,
  scope: z
    .strictObject({
      /** Fire for the next N matching requests. */
      times: z.number().int().min(1).optional(),
      /** Fire on every Nth matching request (N, 2N, ...). */
      every: z.number().int().min(1).optional(),
      from: timeValue.optional(),
      until: timeValue.optional(),
      /** Window length from when the rule is added. */
      durationMs: z.number().int().min(0).optional(),
    })
    .optional(),
});
export type FaultRuleInput = z.input<typeof faultRuleSchema>;

interface CompiledRule {
  id: string;
  input: z.infer<typeof faultRuleSchema>;
  method: string;
  path: RegExp;
  seen: number;
  fired: number;
  from: number;
  until: number;
}

function toMs(v: number | string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number') return v;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new Error(`invalid time '${v}' in fault scope`);
  return t;
}

/** Path pattern to a regex: `{name}` = one segment, `*` = anything; otherwise literal and exact. */
export function pathPattern(pattern: string): RegExp {
  const re = pattern
    .split(/(\{[^}]+\}|\*)/)
    .map((part) => (part === '*' ? '.*' : /^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${re}$`);
}

function compile(input: z.infer<typeof faultRuleSchema>, id: string, nowMs: number): CompiledRule {
  let method = '*';
  let path: RegExp;
  if (typeof input.match === 'string') {
    const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(input.match);
    if (m) {
      method = (m[1] as string).toUpperCase();
      path = pathPattern(m[2] as string);
    } else path = pathPattern(input.match.trim());
  } else {
    method = (input.match.method ?? '*').toUpperCase();
    path = input.match.pathRegex !== undefined ? new RegExp(input.match.pathRegex) : pathPattern(input.match.path ?? '*');
  }
  const scope = input.scope ?? {};
  const from = toMs(scope.from, -Infinity);
  let until = toMs(scope.until, Infinity);
  if (scope.durationMs !== undefined) until = Math.min(until, nowMs + scope.durationMs);
  return { id, input, method, path, seen: 0, fired: 0, from, until };
}

export class FaultRegistry {
  private rules: CompiledRule[] = [];
  private nextId = 1;
  /** Sockets of requests left hanging, destroyed on close(). */
  private readonly hanging = new Set<Socket>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds a rule (validated); returns its id. Throws with the reason when the rule is malformed. */
  add(rule: FaultRuleInput): string {
    const parsed = faultRuleSchema.safeParse(rule);
    if (!parsed.success) {
      throw new Error(`invalid fault rule: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(rule)'}: ${i.message}`).join('; ')}`);
    }
    const id = parsed.data.id ?? `fault-${this.nextId++}`;
    this.rules.push(compile(parsed.data, id, this.now()));
    return id;
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length !== before;
  }

  clear(): void {
    this.rules = [];
  }

  list(): Array<{ id: string; rule: z.infer<typeof faultRuleSchema>; seen: number; fired: number }> {
    return this.rules.map((r) => ({ id: r.id, rule: r.input, seen: r.seen, fired: r.fired }));
  }

  get hangingCount(): number {
    return this.hanging.size;
  }

  /** Destroys the sockets of hung requests (so servers can close). */
  releaseHanging(): void {
    for (const s of this.hanging) s.destroy();
    this.hanging.clear();
  }

  /** Finds the rule that fires for this request (and counts it), dropping used-up or expired rules. */
  pick(method: string, path: string): FaultAction | undefined {
    const nowMs = this.now();
    this.rules = this.rules.filter((r) => nowMs <= r.until && !(r.input.scope?.times !== undefined && r.fired >= r.input.scope.times));
    for (const r of this.rules) {
      if ((r.method !== '*' && r.method !== method) || !r.path.test(path)) continue;
      if (nowMs < r.from) continue;
      r.seen++;
      const every = r.input.scope?.every;
      if (every !== undefined && r.seen % every !== 0) continue;
      r.fired++;
      return r.input.action;
    }
    return undefined;
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      if (req.path.startsWith('/__sim')) return next();
      const action = this.pick(req.method, req.path);
      if (!action) return next();
      res.locals.fault = action.type;
      switch (action.type) {
        case 'latency': {
          const t = setTimeout(next, action.ms);
          res.on('close', () => clearTimeout(t));
          return;
        }
        case 'hang': {
          this.hanging.add(req.socket);
          req.socket.once('close', () => this.hanging.delete(req.socket));
          return;
        }
        case 'reset':
          req.socket.destroy();
          return;
        case 'invalid-json':
          res.status(action.status ?? 200).type('application/json').send('{"components": [{"id": "x1000c0s0b0n0", ');
          return;
        case 'status': {
          const body = action.body ?? 'problem';
          if (body === 'empty') {
            res.status(action.status).end();
          } else if (body === 'problem') {
            res
              .status(action.status)
              .type('application/problem+json')
              .send(JSON.stringify(problemBody(action.status, action.title ?? 'Injected fault', `fault injected for ${req.method} ${req.path}`)));
          } else {
            res.status(action.status).type('application/json').send(JSON.stringify(body === 'null' ? null : body));
          }
          return;
        }
      }
    };
  }
}
