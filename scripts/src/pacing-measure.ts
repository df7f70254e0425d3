/**
 * Measures operator-aware pacing against the simulator's slow operator: the batcher's cycles run with a
 * 1 s check interval (real time) over N pending components until every one is configured, with and without the
 * caps. Prints, per run: seconds until all configured, the peak of batcher sessions pending in CFS, the longest
 * time one session waited in pending, and the sessions deleted as stuck in pending.
 *
 *   npm run build && node scripts/dist/pacing-measure.js [components=4000] [startsPerSecond=4] [pendingTimeoutS=30]
 */
import { createSimulator } from '@cfs-batcher/cfs-sim';
import { createBatcher, DEFAULT_OPTIONS, DEFAULT_TUNING, type Tuning } from '@cfs-batcher/batcher';
import { CfsClient, setLogSilent } from '@cfs-batcher/shared';

const COMMIT = 'a'.repeat(40);

async function run(
  components: number,
  startsPerSecond: number,
  pendingTimeoutS: number,
  caps: Partial<Tuning>,
): Promise<string> {
  const sim = createSimulator({ operator: { pendingMs: 200, runningMs: 2000, maxStartsPerSecond: startsPerSecond } });
  sim.state.putConfiguration({
    name: 'cfg',
    layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: COMMIT, playbook: 'site.yml' }],
  });
  for (let i = 0; i < components; i++) {
    sim.state.putComponent({
      id: `x${String(i).padStart(6, '0')}`,
      desired_config: 'cfg',
      enabled: true,
      error_count: 0,
      state: [],
      tags: {},
    });
  }
  sim.state.options = {
    ...DEFAULT_OPTIONS,
    batch_window: 0,
    batcher_check_interval: 1,
    batcher_pending_timeout: pendingTimeoutS,
  };
  const { url } = await sim.listen(0);
  const client = new CfsClient({ baseUrl: url });
  const batcher = createBatcher({ client, tuning: { ...caps } });
  const start = Date.now();
  let peak = 0;
  const deadline = start + 20 * 60_000;
  const configured = () => [...sim.state.components.values()].every((c) => (c.state ?? []).length > 0);
  while (!configured() && Date.now() < deadline) {
    await batcher.runCycle();
    const pending = [...sim.state.sessions.values()].filter((s) => s.status.session.status === 'pending').length;
    peak = Math.max(peak, pending);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const seconds = (Date.now() - start) / 1000;
  const history = sim.history.all();
  const waits = history.filter((e) => e.running_ms != null).map((e) => (e.running_ms! - e.created_ms) / 1000);
  const stuck =
    (await batcher.metrics.sessionsCompleted.get()).values.find((v) => v.labels.result === 'pending_timeout')?.value ??
    0;
  await sim.close();
  const label =
    caps.pendingSessionsCap === 0
      ? 'no caps'
      : `caps ${caps.pendingSessionsCap} pending, ${caps.createsPerMinuteCap}/min`;
  return `${label}: all configured in ${seconds.toFixed(0)} s, sessions ${history.length}, pending peak ${peak}, longest pending ${Math.max(0, ...waits).toFixed(1)} s, stuck-in-pending deletions ${stuck}, overlaps ${sim.history.overlappingSessions().length}`;
}

async function main(): Promise<void> {
  setLogSilent(true);
  const [n = 4000, rate = 4, timeout = 30] = process.argv.slice(2).map(Number);
  console.log(`${n} components, batch_size 25, operator ${rate} starts/s, batcher_pending_timeout ${timeout} s`);
  console.log(await run(n, rate, timeout, { pendingSessionsCap: 0, createsPerMinuteCap: 0 }));
  const d = DEFAULT_TUNING;
  console.log(
    await run(n, rate, timeout, {
      pendingSessionsCap: d.pendingSessionsCap,
      createsPerMinuteCap: d.createsPerMinuteCap,
    }),
  );
}

void main();
