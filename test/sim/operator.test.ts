import request from 'supertest';
import { selectLayers, type Simulator } from '@cfs-batcher/cfs-sim';
import { addComponent, makeSim, REPO_A, REPO_B, SHA_A, SHA_B, waitFor } from './helpers';

let sim: Simulator;
beforeEach(() => {
  sim = makeSim();
  for (const id of ['n1', 'n2', 'n3']) addComponent(sim, id, { error_count: 0 });
});
afterEach(() => sim.close());

async function create(name: string, extra: Record<string, unknown> = {}) {
  const res = await request(sim.app)
    .post('/v3/sessions')
    .send({
      name,
      configuration_name: 'cfg',
      configuration_limit: '0,1',
      ansible_limit: 'n1,n2,ghost',
      target: { definition: 'dynamic' },
      ...extra,
    });
  expect(res.status).toBe(201);
}
const session = (name: string) => sim.state.sessions.get(name)!.status.session;
const comp = (id: string) => sim.state.components.get(id)!;

describe('operator lifecycle (stepped)', () => {
  it('pending -> running (job set) -> complete/true, writes applied state with error_count 0', async () => {
    sim.state.putComponent({ ...comp('n1'), error_count: 2 });
    await create('s1');
    expect(session('s1')).toMatchObject({ status: 'pending', succeeded: 'none' });
    expect(sim.operator.step()).toBe(1);
    expect(session('s1').status).toBe('running');
    expect(session('s1').job).toMatch(/^cfs-[0-9a-f-]{36}$/);
    sim.operator.step();
    expect(session('s1')).toMatchObject({ status: 'complete', succeeded: 'true' });
    expect(session('s1').completion_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(comp('n1').error_count).toBe(0);
    expect(comp('n1').state!.map((l) => [l.clone_url, l.commit, l.status, l.session_name])).toEqual([
      [REPO_A, SHA_A, 'applied', 's1'],
      [REPO_B, SHA_B, 'applied', 's1'],
    ]);
    expect(comp('n3').state).toEqual([]); // not in ansible_limit
    const list = await request(sim.app).get('/v3/components?ids=n1,n2,n3&status=configured');
    expect(list.body.components.map((c: { id: string }) => c.id)).toEqual(['n1', 'n2']);
  });

  it('runs only configuration_limit layers', async () => {
    await create('s1', { configuration_limit: '1' });
    sim.operator.runToCompletion();
    expect(comp('n1').state!.map((l) => l.clone_url)).toEqual([REPO_B]);
  });

  it('a failing host stops after that layer: _failed + error_count+1, session false, no later layers', async () => {
    sim.operator.setComponentOutcome('n2', 'fail', 0);
    await create('s1');
    sim.operator.runToCompletion();
    expect(session('s1')).toMatchObject({ status: 'complete', succeeded: 'false' });
    expect(comp('n2').state).toEqual([expect.objectContaining({ clone_url: REPO_A, commit: SHA_A, status: 'failed' })]);
    expect(comp('n2').error_count).toBe(1);
    expect(comp('n1').state!.map((l) => l.clone_url)).toEqual([REPO_A]); // layer 1 never ran for anyone
  });

  it('skip writes nothing for that host; incomplete keeps error_count', async () => {
    sim.operator.setComponentOutcome('n1', 'skip');
    sim.operator.setLayerOutcome('cfg', 1, 'incomplete');
    sim.state.putComponent({ ...comp('n2'), error_count: 1, retry_policy: 5 });
    await create('s1');
    sim.operator.runToCompletion();
    expect(comp('n1').state).toEqual([]);
    expect(comp('n2').state!.map((l) => l.status)).toEqual(['applied', 'incomplete']);
    expect(comp('n2').error_count).toBe(0); // reset by the applied layer 0, unchanged by the incomplete one
    expect(session('s1').succeeded).toBe('false');
  });

  it.each([
    ['clone_failure', 'complete', 'false'],
    ['job_vanishes', 'complete', 'unknown'],
    ['stuck_pending', 'pending', 'none'],
    ['hang_running', 'running', 'none'],
  ] as const)('session mode %s', async (mode, status, succeeded) => {
    sim.operator.addSessionMode({ mode, count: 1 });
    await create('s1');
    sim.operator.runToCompletion();
    expect(session('s1')).toMatchObject({ status, succeeded });
    expect(comp('n1').state).toEqual([]);
    if (mode === 'stuck_pending') expect(session('s1').job).toBeUndefined();
    await create('s2'); // the rule was for one session only
    sim.operator.runToCompletion();
    expect(session('s2').succeeded).toBe('true');
  });

  it('vanish() completes an active session as unknown', async () => {
    await create('s1');
    sim.operator.step();
    expect(sim.operator.vanish('s1')).toBe(true);
    expect(session('s1')).toMatchObject({ status: 'complete', succeeded: 'unknown' });
  });

  it('does not record state for debug_ configurations or passthrough', async () => {
    await create('s1', { ansible_passthrough: '--tags x' });
    sim.operator.runToCompletion();
    expect(session('s1').succeeded).toBe('true');
    expect(comp('n1').state).toEqual([]);
  });

  it('history records every session with times and results, and detects overlaps', async () => {
    await create('s1');
    await create('s2'); // same hosts while s1 is active
    sim.operator.runToCompletion();
    const hist = await request(sim.app).get('/__sim/sessions-history');
    expect(hist.body.sessions.map((s: { name: string; succeeded: string }) => [s.name, s.succeeded])).toEqual([
      ['s1', 'true'],
      ['s2', 'true'],
    ]);
    expect(hist.body.sessions[0].hosts).toEqual(['n1', 'n2', 'ghost']);
    expect(hist.body.overlaps.map((o: { component: string }) => o.component)).toEqual(['n1', 'n2', 'ghost']);
  });

  it('control API: pause/step/outcomes over HTTP', async () => {
    const set = await request(sim.app)
      .post('/__sim/operator')
      .send({ componentOutcomes: { n1: 'fail' }, pendingMs: 5, runningMs: 5 });
    expect(set.status).toBe(200);
    expect(set.body.settings).toMatchObject({ pendingMs: 5, runningMs: 5 });
    await create('s1');
    const step = await request(sim.app).post('/__sim/operator').send({ runToCompletion: true });
    expect(step.body.moved).toBeGreaterThan(0);
    expect(session('s1').succeeded).toBe('false');
    expect(
      (
        await request(sim.app)
          .post('/__sim/operator')
          .send({ componentOutcomes: { n1: 'explode' } })
      ).status,
    ).toBe(400);
  });
});

describe('operator with real timers', () => {
  it('moves sessions along by itself after the configured delays', async () => {
    sim.operator.setDelays({ pendingMs: 20, runningMs: 20 });
    sim.operator.resume();
    await sim.listen(0);
    await create('s1');
    await waitFor(() => session('s1').status === 'complete', 5000);
    expect(session('s1').succeeded).toBe('true');
    expect(sim.history.get('s1')!.running_ms).not.toBeNull();
  });
});

describe('selectLayers', () => {
  const layers = [{ name: 'cos' }, { name: 'uss' }, { name: 'shs' }];
  it.each([
    ['', [0, 1, 2]],
    ['2,0', [0, 2]],
    ['0,7', [0]],
    ['uss,shs', [1, 2]],
  ])('%s', (limit, expected) => expect(selectLayers(limit, layers)).toEqual(expected));
});
