/**
 * Fault injection: rules that match method + path and make the next N / every Nth / windowed requests fail in a
 * chosen way. Phase `before` (default) answers instead of the handler (nothing is committed); phase `after` lets the
 * handler commit and then replaces or loses its answer; `late-commit` holds a request and commits it later whatever
 * the client does. The first matching rule that fires wins. /__sim paths and the control port are never faulted.
 * Applying the actions lives in fault-actions.ts.
 */
import type { Socket } from 'node:net';
import { z } from 'zod';
import { faultMiddleware, lateCommitGate } from './fault-actions';

const methodName = z.string().regex(/^(\*|[A-Za-z]+)$/);

export const faultActionSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('status'),
    status: z.number().int().min(100).max(599),
    /** 'problem' (default): RFC 7807 body; 'empty': no body; 'null': JSON null; 'html': an HTML error page; else JSON. */
    body: z.unknown().optional(),
    title: z.string().optional(),
    detail: z.string().optional(),
  }),
  z.strictObject({ type: z.literal('invalid-json'), status: z.number().int().min(100).max(599).optional() }),
  z.strictObject({ type: z.literal('latency'), ms: z.number().int().min(0) }),
  z.strictObject({ type: z.literal('hang') }),
  z.strictObject({ type: z.literal('reset') }),
  /** Always after the handler: the answer's JSON object loses these top-level keys (e.g. options missing). */
  z.strictObject({ type: z.literal('omit-keys'), keys: z.array(z.string()).min(1) }),
  /**
   * The request is held ms, then committed even if the client gave up or died. The client meanwhile sees:
   * 'hang' (default: no answer ever), 'reset' (socket reset once the body is read), 'answer' (the real answer at
   * commit, if it still waits).
   */
  z.strictObject({
    type: z.literal('late-commit'),
    ms: z.number().int().min(0),
    client: z.enum(['hang', 'reset', 'answer']).optional(),
  }),
]);
export type FaultAction = z.infer<typeof faultActionSchema>;
export type FaultPhase = 'before' | 'after';

export interface PickedFault {
  id: string;
  action: FaultAction;
  phase: FaultPhase;
}

const timeValue = z.union([z.number(), z.string()]);

export const faultRuleSchema = z.strictObject({
  id: z.string().optional(),
  /** 'GET /v3/sessions', 'PATCH /v3/components/{id}', '* /v3/components*', or an object form. */
  match: z.union([
    z.string().min(1),
    z.strictObject({ method: methodName.optional(), path: z.string().optional(), pathRegex: z.string().optional() }),
  ]),
  action: faultActionSchema,
  /** 'before' (default): answer instead of the handler; 'after': the handler commits, then the action replaces its answer. */
  phase: z.enum(['before', 'after']).optional(),
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
      /** Fire on this fraction of matching requests, drawn from a PRNG seeded with `seed` (default 1): repeatable. */
      probability: z.number().min(0).max(1).optional(),
      seed: z.number().int().optional(),
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
  random: () => number;
}

/** mulberry32: a tiny seeded PRNG, so a random fault schedule replays exactly. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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
    .map((part) =>
      part === '*' ? '.*' : /^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
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
    path =
      input.match.pathRegex !== undefined ? new RegExp(input.match.pathRegex) : pathPattern(input.match.path ?? '*');
  }
  const scope = input.scope ?? {};
  const from = toMs(scope.from, -Infinity);
  let until = toMs(scope.until, Infinity);
  if (scope.durationMs !== undefined) until = Math.min(until, nowMs + scope.durationMs);
  return { id, input, method, path, seen: 0, fired: 0, from, until, random: seeded(scope.seed ?? 1) };
}

export class FaultRegistry {
  private rules: CompiledRule[] = [];
  private nextId = 1;
  /** Sockets of requests left hanging, destroyed on close(). */
  private readonly hanging = new Set<Socket>();
  /** Late commits still to land. */
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(readonly now: () => number = Date.now) {}

  /** Adds a rule (validated); returns its id. Throws with the reason when the rule is malformed. */
  add(rule: FaultRuleInput): string {
    const parsed = faultRuleSchema.safeParse(rule);
    if (!parsed.success) {
      throw new Error(
        `invalid fault rule: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(rule)'}: ${i.message}`).join('; ')}`,
      );
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
  pick(method: string, path: string): PickedFault | undefined {
    const nowMs = this.now();
    this.rules = this.rules.filter(
      (r) => nowMs <= r.until && !(r.input.scope?.times !== undefined && r.fired >= r.input.scope.times),
    );
    for (const r of this.rules) {
      if ((r.method !== '*' && r.method !== method) || !r.path.test(path)) continue;
      if (nowMs < r.from) continue;
      r.seen++;
      const every = r.input.scope?.every;
      if (every !== undefined && r.seen % every !== 0) continue;
      const p = r.input.scope?.probability;
      if (p !== undefined && !(r.random() < p)) continue;
      r.fired++;
      return { action: r.input.action, phase: r.input.phase ?? 'before', id: r.id };
    }
    return undefined;
  }

  /** Marks a socket as held by a fault (released by releaseHanging()). */
  holdSocket(socket: Socket): void {
    this.hanging.add(socket);
    socket.once('close', () => this.hanging.delete(socket));
  }

  /** Runs `fn` after ms whatever happens to the client's socket (late commits); cancelled only by cancelTimers(). */
  later(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  get pendingCommits(): number {
    return this.timers.size;
  }

  cancelTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Before the body parser: picks the rule and applies it (see fault-actions.ts). */
  middleware() {
    return faultMiddleware(this);
  }

  /** After the body parser: holds late commits. */
  commitGate() {
    return lateCommitGate(this);
  }
}
