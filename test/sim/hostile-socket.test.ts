/** Hostile faults that need a real socket: answers lost after commit, late commits, hanging and slow endpoints. */
import http from 'node:http';
import type { Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, waitFor } from './helpers';

let sim: Simulator;
let port = 0;
beforeEach(async () => {
  sim = makeSim();
  for (const id of ['x1', 'x2']) addComponent(sim, id);
  port = (await sim.listen(0)).port;
});
afterEach(() => sim.close());

interface Outcome {
  status?: number;
  text?: string;
  error?: string;
}

/** One request on its own connection; `timeoutMs` = the client gives up (socket closed). */
function call(
  method: string,
  path: string,
  payload?: unknown,
  timeoutMs = 5000,
  onSent?: (req: http.ClientRequest) => void,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const data = payload === undefined ? undefined : JSON.stringify(payload);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        timeout: timeoutMs,
        headers: data ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode, text }));
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('client timeout'), { code: 'TIMEOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(data, () => onSent?.(req));
  });
}

const create = (name: string) => ({
  name,
  configuration_name: 'cfg',
  ansible_limit: 'x1,x2',
  target: { definition: 'dynamic' },
});

describe('lost answer after commit', () => {
  it('connection reset: the session exists, the client saw ECONNRESET', async () => {
    sim.faults.add({ match: 'POST /v3/sessions', phase: 'after', action: { type: 'reset' }, scope: { times: 1 } });
    const r = await call('POST', '/v3/sessions', create('batcher-reset'));
    expect(r.error).toMatch(/ECONNRESET|socket hang up/);
    expect(sim.state.sessions.has('batcher-reset')).toBe(true);
    expect(sim.history.get('batcher-reset')?.fault).toBe('after:reset');
  });

  it('hang: committed, never answered; the client gives up', async () => {
    sim.faults.add({ match: 'POST /v3/sessions', phase: 'after', action: { type: 'hang' }, scope: { times: 1 } });
    const r = await call('POST', '/v3/sessions', create('batcher-hang'), 200);
    expect(r.error).toBe('TIMEOUT');
    expect(sim.state.sessions.has('batcher-hang')).toBe(true);
  });
});

describe('late commit: held, committed later whatever the client does', () => {
  it.each([
    ['the client times out', 'hang' as const],
    ['the client sees a reset at once', 'reset' as const],
  ])('%s', async (_label, client) => {
    sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'late-commit', ms: 300, client },
      scope: { times: 1 },
    });
    const r = await call('POST', '/v3/sessions', create('batcher-late'), 100);
    sim.state.putComponent({ ...sim.state.components.get('x1')!, tags: { changed: 'after-post' } }); // after the POST arrived
    expect(r.error).toMatch(client === 'hang' ? /TIMEOUT/ : /ECONNRESET|socket hang up/);
    await waitFor(() => sim.state.sessions.has('batcher-late'), 5000);
    const h = sim.history.get('batcher-late')!;
    expect(h.fault).toBe('late:late-commit');
    expect(h.members.x1!.tags).toEqual({}); // members as they were when the POST arrived
    expect(h.created_ms - h.received_ms!).toBeGreaterThanOrEqual(299); // by construction: held 300 ms (timer slack 1 ms)
    expect(sim.faults.pendingCommits).toBe(0);
  });

  it('the client dies (socket closed) while the POST is held: the commit still lands', async () => {
    sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'late-commit', ms: 200, client: 'answer' },
      scope: { times: 1 },
    });
    const r = await call('POST', '/v3/sessions', create('batcher-died'), 5000, (req) => {
      void waitFor(() => sim.faults.pendingCommits === 1, 5000).then(() =>
        req.destroy(Object.assign(new Error('died'), { code: 'DIED' })),
      );
    });
    expect(r.error).toBe('DIED');
    await waitFor(() => sim.state.sessions.has('batcher-died'), 5000);
    expect(sim.stats.snapshot().byRouteStatus['POST /v3/sessions late-commit']).toBe(1);
  });

  it("client 'answer': a client that waits gets the real 201 at commit", async () => {
    sim.faults.add({
      match: 'POST /v3/sessions',
      action: { type: 'late-commit', ms: 50, client: 'answer' },
      scope: { times: 1 },
    });
    const r = await call('POST', '/v3/sessions', create('batcher-slow'));
    expect(r.status).toBe(201);
    expect(JSON.parse(r.text!).name).toBe('batcher-slow');
  });

  it('close() cancels commits still held', async () => {
    sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'late-commit', ms: 60_000 }, scope: { times: 1 } });
    const pending = call('POST', '/v3/sessions', create('batcher-never'));
    await waitFor(() => sim.faults.pendingCommits === 1, 5000);
    await sim.close();
    expect((await pending).error).toBeDefined();
    expect(sim.faults.pendingCommits).toBe(0);
    expect(sim.state.sessions.has('batcher-never')).toBe(false);
  });
});

describe('hanging and slow endpoints', () => {
  it('PATCH /v3/components/{id} hangs until the client gives up; nothing is written', async () => {
    sim.faults.add({ match: 'PATCH /v3/components/{id}', action: { type: 'hang' } });
    const r = await call('PATCH', '/v3/components/x1', { error_count: 3 }, 150);
    expect(r.error).toBe('TIMEOUT');
    expect(sim.state.components.get('x1')!.error_count).toBe(0);
    expect((await call('GET', '/v3/components/x1')).status).toBe(200); // other routes answer
  });

  it('latency before the handler on PATCH: a client that gives up first writes nothing', async () => {
    sim.faults.add({ match: 'PATCH /v3/components/{id}', action: { type: 'latency', ms: 5000 } });
    expect((await call('PATCH', '/v3/components/x1', { error_count: 3 }, 100)).error).toBe('TIMEOUT');
    expect(sim.state.components.get('x1')!.error_count).toBe(0);
  });

  it('slow creates: latency per POST, answered; phase after = committed at once, answered later', async () => {
    sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'latency', ms: 40 }, scope: { times: 1 } });
    expect((await call('POST', '/v3/sessions', create('batcher-1'))).status).toBe(201);
    sim.faults.add({
      match: 'POST /v3/sessions',
      phase: 'after',
      action: { type: 'latency', ms: 5000 },
      scope: { times: 1 },
    });
    expect((await call('POST', '/v3/sessions', create('batcher-2'), 100)).error).toBe('TIMEOUT');
    expect(sim.state.sessions.has('batcher-2')).toBe(true);
  });
});
