/**
 * The loop against the in-process simulator's hostile faults: refused creates, a hanging completion PATCH and slow
 * creates. Each test also tries to break an invariant: no component in
 * two active sessions, no component lost.
 */
import { heartbeatBody } from '@cfs-batcher/batcher';
import {
  harnessLifecycle,
  count,
  fastOptions,
  ids,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

const NO_PACING = { pendingSessionsCap: 0, createsPerMinuteCap: 0 };
const hb = () => heartbeatBody(h.batcher.state, h.clock.now(), h.clock.wallOffset);

it.each([
  [500, 15],
  [500, 5],
  [404, 5],
])(
  'POST /v3/sessions answering %i for minutes (%i components, batches of 5): cfs_refusing, an attempt every check interval, no flood, resumes',
  async (status, n) => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 5 });
        putComponents(sim, ids('x', n));
      },
      deps: { tuning: NO_PACING },
    });
    h.sim.faults.add({ match: 'POST /v3/sessions', action: { type: 'status', status } });
    const attempts: number[] = [];
    for (let cycle = 0; cycle < 30; cycle++) {
      // 5 minutes of fake time, one check interval (10 s) per cycle
      await h.batcher.runCycle();
      const body = hb();
      expect(body.creating).toMatchObject({ state: 'cfs_refusing' });
      expect(body.creating!.reason).toMatch(new RegExp(`POST /v3/sessions answered ${status} \\(\\d+ times?\\)`));
      expect(body.creating!.cfs_trouble_since_ms).not.toBeNull();
      attempts.push(body.creating!.last_attempt_ms!);
      h.clock.advance(10_000);
    }
    // last_attempt_ms advances every cycle, i.e. at least once per check interval
    for (let i = 1; i < attempts.length; i++) expect(attempts[i]!).toBeGreaterThan(attempts[i - 1]!);
    // ... without a flood: about one create or lookup per cycle, not one per batch
    expect(count(h.sim, 'POST /v3/sessions')).toBeLessThanOrEqual(2 * 30);
    expect(sessions(h.sim)).toHaveLength(0);
    h.sim.faults.clear();
    await h.batcher.runCycle();
    expect(hb().creating!.cfs_trouble_since_ms).toBeNull();
    h.clock.advance(10_000);
    await h.batcher.runCycle();
    // every component is in exactly one session within a cycle or two of CFS recovering: none lost, none doubled
    const hosts = sessions(h.sim).flatMap((s) => s.ansible.limit.split(','));
    expect(hosts.sort()).toEqual(ids('x', n));
    expect(h.sim.history.overlappingSessions()).toEqual([]);
  },
);

it('hanging completion PATCHes: other batches still sent, the unwritten completion held and retried, never lost', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim, 'cfg');
      putConfig(sim, 'other');
      fastOptions(sim, { batch_size: 4 });
      putComponents(sim, ids('x', 4));
    },
    clientOptions: { requestTimeoutMs: 300 },
    clockFollowsRequests: true,
    deps: { tuning: { ...NO_PACING, patchBudgetMs: 500, patchConcurrency: 2 } },
  });
  h.sim.operator.addSessionMode({ mode: 'clone_failure', configuration: 'cfg' });
  await h.batcher.runCycle();
  expect(sessions(h.sim)).toHaveLength(1);
  h.sim.operator.runToCompletion();
  h.sim.faults.add({ match: 'PATCH /v3/components/{id}', action: { type: 'hang' } });
  putComponents(h.sim, ids('y', 4), { desired_config: 'other' });
  h.clock.advance(10_000);
  await h.batcher.runCycle();
  // the y batch went out although every PATCH hangs: one slow endpoint does not block the rest
  expect(sessions(h.sim).filter((s) => s.ansible.limit.startsWith('y'))).toHaveLength(1);
  let body = hb();
  expect(body.completions_unwritten).toBe(4);
  expect(body.creating!.cfs_trouble_since_ms).not.toBeNull();
  expect(body.creating!.reason).toMatch(/PATCH \/v3\/components\/\{component_id\} failed \(timeout\)/);
  // budget: the first round of 2 PATCHes ran past it, the other 2 were left for the next cycle
  expect(count(h.sim, 'PATCH /v3/components/{id}')).toBeLessThanOrEqual(2);
  // held: the x members stay busy (pending in CFS, error_count unwritten) and are not batched again
  for (let i = 0; i < 3; i++) {
    h.clock.advance(10_000);
    await h.batcher.runCycle();
    expect(hb().completions_unwritten).toBe(4);
    expect(sessions(h.sim).filter((s) => s.ansible.limit.startsWith('x'))).toHaveLength(1);
  }
  h.sim.faults.clear();
  h.clock.advance(10_000);
  await h.batcher.runCycle();
  body = hb();
  expect(body.completions_unwritten).toBe(0);
  expect(body.creating!.cfs_trouble_since_ms).toBeNull();
  for (const id of ids('x', 4)) expect(h.sim.state.components.get(id)!.error_count).toBe(1);
  // released and written: the x components are batched again from their fresh state
  h.clock.advance(10_000);
  await h.batcher.runCycle();
  expect(sessions(h.sim).filter((s) => s.ansible.limit.startsWith('x'))).toHaveLength(2);
  expect(h.sim.history.overlappingSessions()).toEqual([]);
});

it('slow creates: the send phase yields after its time slice and goes on next cycle', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim, { batch_size: 2 });
      putComponents(sim, ids('x', 40));
    },
    clockFollowsRequests: true,
    deps: { tuning: { ...NO_PACING, sendSliceMs: 500 } },
  });
  h.sim.faults.add({ match: 'POST /v3/sessions', phase: 'after', action: { type: 'latency', ms: 100 } });
  const created: number[] = [];
  for (let cycle = 0; cycle < 10 && sessions(h.sim).length < 20; cycle++) {
    const r = await h.batcher.runCycle();
    expect(r.outcome).toBe('ok');
    created.push(r.sessionsCreated);
    h.clock.advance(10_000);
  }
  // each cycle stops after ~500 ms of 100 ms creates, and the next cycle goes on where it stopped
  expect(created[0]).toBeGreaterThan(0);
  expect(Math.max(...created)).toBeLessThanOrEqual(6);
  expect(created.length).toBeGreaterThan(3);
  expect(sessions(h.sim)).toHaveLength(20);
  expect(logs.has(/^Send time slice of 500 ms used/, 'INFO')).toBe(true);
  const hosts = sessions(h.sim).flatMap((s) => s.ansible.limit.split(','));
  expect(new Set(hosts).size).toBe(40);
  expect(h.sim.history.overlappingSessions()).toEqual([]);
});
