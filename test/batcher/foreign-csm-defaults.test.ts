/**
 * Two copies of this batcher against one CFS with CSM's default options (interval 10 s, window 60 s, batch size 25):
 * 300 components, then 120 moved to another configuration in three waves while both run. The elder copy creates,
 * the younger stands down on first sight of the elder's sessions, and no component is ever in two active sessions:
 * the hold on another batcher's members covers what the stand-down does not. Cycles alternate on fake clocks.
 */
import { CfsClient } from '@cfs-batcher/shared';
import { DEFAULT_OPTIONS, createBatcher, type Batcher } from '@cfs-batcher/batcher';
import { COMMIT_B } from './fixtures';
import { FakeClock, harnessLifecycle, ids, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);

const N = 300;

it("CSM defaults: the younger copy stands down, and no component is ever in two of the batchers' active sessions", async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim, 'cfg-a');
      putConfig(sim, 'cfg-b', 1, COMMIT_B);
      sim.state.options = { ...DEFAULT_OPTIONS };
      putComponents(sim, ids('x', N), { desired_config: 'cfg-a' });
    },
  });
  // Started 5 s after the elder (its instance id is younger).
  const clockB = new FakeClock();
  clockB.advance(5000);
  const younger: Batcher = createBatcher({
    client: new CfsClient({ baseUrl: h.url, retryBudgetMs: 0, requestTimeoutMs: 2000, connectTimeoutMs: 1000 }),
    clock: clockB,
    sleep: async () => undefined,
    random: () => 0.5,
  });
  const elder = h.batcher;
  let youngerDownAt: number | null = null;
  const round = async (): Promise<void> => {
    h.clock.advance(10_000);
    clockB.advance(10_000);
    expect((await elder.runCycle()).outcome).toBe('ok');
    expect((await younger.runCycle()).outcome).toBe('ok');
    if (younger.state.foreign.standingDown !== null) youngerDownAt ??= h.sim.history.all().length;
    h.sim.operator.step();
  };
  for (let i = 0; i < 12; i++) await round();
  for (const wave of [0, 1, 2]) {
    for (const id of ids('x', N).filter((_, i) => i % 5 === wave))
      h.sim.state.components.get(id)!.desired_config = 'cfg-b';
    for (let i = 0; i < 4; i++) await round();
  }
  for (let i = 0; i < 12; i++) await round();
  expect(h.sim.history.overlappingSessions()).toEqual([]);
  expect(youngerDownAt).not.toBeNull();
  expect(elder.state.foreign.standingDown).toBeNull();
  expect(elder.state.sessionsCreatedTotal).toBeGreaterThan(0);
  // Nothing left undone: every component configured by the elder.
  const pending = [...h.sim.state.components.keys()].filter((id) => {
    const c = h.sim.state.components.get(id)!;
    return !(c.state ?? []).some((l) => l.commit === (c.desired_config === 'cfg-b' ? COMMIT_B : 'a'.repeat(40)));
  });
  expect(pending).toEqual([]);
});
