/** /__sim: the simulator's own control API (not part of CFS). */
import { formatZodIssues } from '@cfs-batcher/shared';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { SimDeps } from './deps';
import { generateInventory } from './generator';
import type { ForeignBatcher } from './foreign-batcher';
import { foreignBatcherSchema, outcome, sessionModeRuleSchema } from './scenario';
import { problemBody } from './problem';

export interface ControlDeps extends SimDeps {
  foreign: ForeignBatcher;
  /** Closes the listening socket for durationMs (connection refused), then reopens on the same port. */
  startOutage: (durationMs: number) => Promise<void>;
}

const operatorCommand = z.strictObject({
  pause: z.boolean().optional(),
  pendingMs: z.number().int().min(0).optional(),
  pendingJitterMs: z.number().int().min(0).optional(),
  runningMs: z.number().int().min(0).optional(),
  maxStartsPerSecond: z.number().int().min(0).optional(),
  /** true = every active session one stage; a string = that session only. */
  step: z.union([z.literal(true), z.string()]).optional(),
  runToCompletion: z.boolean().optional(),
  vanish: z.string().optional(),
  clearOutcomes: z.boolean().optional(),
  componentOutcomes: z.record(z.string(), outcome).optional(),
  layerOutcomes: z
    .array(z.strictObject({ configuration: z.string(), layer: z.number().int().min(0).optional(), outcome }))
    .optional(),
  sessionModes: z.array(sessionModeRuleSchema).optional(),
});

function bad(res: Response, detail: string): void {
  res
    .status(400)
    .type('application/problem+json')
    .send(JSON.stringify(problemBody(400, 'Bad Request', detail)));
}

function issues(err: z.ZodError): string {
  return formatZodIssues(err, { max: Infinity, root: '(body)' });
}

export function controlRouter(deps: ControlDeps): express.Router {
  const { faults, stats, operator, history, state } = deps;
  const r = express.Router();

  r.get('/faults', (_req, res) => void res.json({ faults: faults.list() }));
  r.post('/faults', (req, res) => {
    const body: unknown = req.body;
    // Each rule is checked by faults.add (zod); a bad one is a 400 naming what was wrong.
    const rules = (Array.isArray(body) ? body : [body]) as Parameters<typeof faults.add>[0][];
    try {
      res.status(201).json({ ids: rules.map((rule) => faults.add(rule)) });
    } catch (err) {
      bad(res, (err as Error).message);
    }
  });
  r.delete('/faults', (_req, res) => {
    faults.clear();
    res.status(204).end();
  });
  r.delete('/faults/:id', (req, res) => void res.status(faults.remove(String(req.params.id)) ? 204 : 404).end());

  r.get('/stats', (_req, res) => void res.json(stats.snapshot()));
  r.delete('/stats', (_req, res) => {
    stats.reset();
    res.status(204).end();
  });

  r.get(
    '/operator',
    (_req, res) =>
      void res.json({ settings: operator.settings, paused: operator.paused, active: operator.activeSessions() }),
  );
  r.post('/operator', (req, res) => {
    const parsed = operatorCommand.safeParse(req.body ?? {});
    if (!parsed.success) return bad(res, issues(parsed.error));
    const c = parsed.data;
    if (c.clearOutcomes) operator.clearOutcomes();
    if (c.pause === true) operator.pause();
    if (c.pause === false) operator.resume();
    operator.setDelays(c);
    for (const [id, o] of Object.entries(c.componentOutcomes ?? {})) operator.setComponentOutcome(id, o as never);
    for (const l of c.layerOutcomes ?? []) operator.setLayerOutcome(l.configuration, l.layer, l.outcome as never);
    for (const m of c.sessionModes ?? []) operator.addSessionMode(m as never);
    let moved = 0;
    if (c.step !== undefined) moved += operator.step(c.step === true ? undefined : c.step);
    if (c.runToCompletion) moved += operator.runToCompletion();
    if (c.vanish !== undefined && !operator.vanish(c.vanish)) return bad(res, `session ${c.vanish} is not active`);
    res.json({ settings: operator.settings, paused: operator.paused, moved, active: operator.activeSessions() });
  });

  r.get(
    '/sessions-history',
    (_req, res) => void res.json({ sessions: history.all(), overlaps: history.overlappingSessions() }),
  );

  const foreignView = () => ({ settings: deps.foreign.settings, created: deps.foreign.created });
  r.get('/foreign-batcher', (_req, res) => void res.json(foreignView()));
  r.post('/foreign-batcher', (req, res) => {
    const parsed = foreignBatcherSchema.safeParse(req.body ?? {});
    if (!parsed.success) return bad(res, issues(parsed.error));
    deps.foreign.configure(parsed.data);
    res.json(foreignView());
  });

  r.get('/sessions-summary', (_req, res) => void res.json(history.summary()));

  r.post('/outage', (req, res) => {
    const ms = Number((req.body as { durationMs?: unknown } | undefined)?.durationMs ?? 1000);
    if (!Number.isInteger(ms) || ms < 0) return bad(res, 'durationMs must be a non-negative integer');
    res.status(202).json({ durationMs: ms });
    // Reply first: the socket closes right after.
    res.on('finish', () => void deps.startOutage(ms));
  });

  r.post('/generate', (req, res) => {
    const parsed = z
      .strictObject({
        components: z.number().int().min(0).max(200_000),
        configurations: z.number().int().min(1).max(100).optional(),
      })
      .safeParse(req.body ?? {});
    if (!parsed.success) return bad(res, issues(parsed.error));
    const inv = generateInventory(parsed.data);
    for (const c of inv.configurations) state.putConfiguration(c);
    state.putComponents(inv.components);
    res.status(201).json({ components: inv.components.length, configurations: inv.configurations.map((c) => c.name) });
  });

  r.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => bad(res, (err as Error).message));
  return r;
}
