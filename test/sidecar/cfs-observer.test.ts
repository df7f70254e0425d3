import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { CfsClient } from '@cfs-batcher/shared';
import { observeCfs } from '@cfs-batcher/sidecar-health';

/** A stub CFS that records the queries it gets. */
describe('the sidecar CFS observer (real CfsClient, stub server)', () => {
  let server: Server;
  let base: string;
  const seen: { path: string; query: Record<string, unknown> }[] = [];
  const answers = { pending: true, running: [] as string[], pendingSessions: ['batcher-p1'], fail: false };
  const clock = () => ({ wallMs: Date.now(), monoMs: performance.now() });

  beforeAll(async () => {
    const app = express();
    app.use((req, res, next) => {
      seen.push({ path: req.path, query: { ...(req.query as Record<string, unknown>) } });
      if (answers.fail) return res.status(503).json({ title: 'Service Unavailable', status: 503 });
      next();
    });
    app.get('/v3/components', (_req, res) => {
      res.json({
        components: answers.pending ? [{ id: 'x1', enabled: true, configuration_status: 'pending' }] : [],
        next: answers.pending ? { after_id: 'x1', limit: 1 } : null,
      });
    });
    app.get('/v3/sessions', (req, res) => {
      const names = req.query.status === 'running' ? answers.running : answers.pendingSessions;
      res.json({ sessions: names.slice(0, 1).map((name) => ({ name })), next: null });
    });
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('asks for one pending component and one active batcher session, and stops paging', async () => {
    const client = new CfsClient({ baseUrl: base, retryBudgetMs: 0, requestTimeoutMs: 2000 });
    const o = await observeCfs(client, clock);
    expect(o).toMatchObject({
      ok: true,
      pendingComponents: true,
      activeSession: { name: 'batcher-p1', status: 'pending' },
    });
    expect(seen.map((s) => s.path)).toEqual(['/v3/components', '/v3/sessions', '/v3/sessions']);
    expect(seen[0]!.query).toMatchObject({ enabled: 'true', status: 'pending', limit: '1' });
    expect(seen[1]!.query).toMatchObject({ name_contains: 'batcher-', status: 'running', limit: '1' });
    expect(seen[2]!.query).toMatchObject({ name_contains: 'batcher-', status: 'pending', limit: '1' });
  });

  it('skips the session queries when nothing is pending', async () => {
    answers.pending = false;
    const o = await observeCfs(new CfsClient({ baseUrl: base, retryBudgetMs: 0 }), clock);
    answers.pending = true;
    expect(o).toMatchObject({ ok: true, pendingComponents: false, activeSession: null });
    expect(seen).toHaveLength(1);
  });

  it('reports an error answer as unreachable CFS, without throwing', async () => {
    answers.fail = true;
    const o = await observeCfs(new CfsClient({ baseUrl: base, retryBudgetMs: 0 }), clock);
    answers.fail = false;
    expect(o.ok).toBe(false);
    expect(o.error).toMatch(/503/);
  });

  it('reports a refused connection', async () => {
    const o = await observeCfs(
      new CfsClient({ baseUrl: 'http://127.0.0.1:1/v3', retryBudgetMs: 0, connectTimeoutMs: 500 }),
      clock,
    );
    expect(o).toMatchObject({ ok: false });
    expect(o.error).toMatch(/unreachable|timeout/);
  });
});
