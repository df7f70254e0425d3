/**
 * Another batcher against the same CFS, end to end: two real batcher processes of this project against one
 * simulator, and one batcher beside the simulator's scripted original (cfs-sim/src/foreign-batcher.ts, all full
 * batches at once every cycle). Components move to another configuration in three waves after both are running.
 * Counted from the simulator's history: components put into a second active session by a session created after
 * this batcher stood down (must be 0), how long standing down took, and what was created before it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSimulator, type HistoryEntry, type Simulator } from '@cfs-batcher/cfs-sim';
import { FAST_BATCHER_ENV, smallScenario } from '../helpers/pod-settings';
import { spawnNode, type Proc } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { report, waitFor } from '../helpers/wait';

const N = 120;
const BATCH = 5;
const STAND_DOWN = /Another batcher is creating sessions in this CFS .*standing down/;
const CONTEST = /Another batcher is creating sessions in this CFS/;
const tmp = makeTempDir('foreign');
let sim: Simulator;
let cfsUrl: string;
const procs: Proc[] = [];

function startBatcher(name: string): Proc {
  const p = spawnNode({
    name,
    script: 'batcher/dist/main.js',
    env: { ...FAST_BATCHER_ENV, CFS_API_URL: cfsUrl, HEARTBEAT_PATH: path.join(tmp.dir, `${name}.json`) },
  });
  procs.push(p);
  return p;
}

function heartbeat(name: string): { phase: string; creating?: { state: string; reason: string } } | null {
  try {
    return JSON.parse(readFileSync(path.join(tmp.dir, `${name}.json`), 'utf8'));
  } catch {
    return null;
  }
}

/** Wave k: every sixth component from k on moves to the other configuration, so it is pending again. */
function wave(k: number): void {
  for (let i = k; i < N; i += 3) {
    if (i % 2 !== 0) continue;
    const c = sim.state.components.get(`x3000c0s${i}b0n0`)!;
    c.desired_config = c.desired_config === 'cfg-0' ? 'cfg-1' : 'cfg-0';
  }
}

/** Pairs of sessions sharing a component while both were active, the later one's creation time with each. */
function overlaps(): { component: string; later: HistoryEntry }[] {
  return sim.history.overlappingSessions().map((o) => {
    const [a, b] = o.sessions.map((n) => sim.history.get(n)!);
    return { component: o.component, later: a!.created_seq > b!.created_seq ? a! : b! };
  });
}

async function noPending(timeoutMs: number, what: string): Promise<void> {
  await waitFor(
    async () => {
      const body = (await (await fetch(`${cfsUrl}/components?status=pending&limit=1`)).json()) as {
        components: unknown[];
      };
      return body.components.length === 0;
    },
    { timeoutMs, what, intervalMs: 250 },
  );
}

beforeEach(async () => {
  sim = createSimulator({
    scenario: smallScenario(N, {
      batchSize: BATCH,
      checkInterval: 1,
      batchWindow: 2,
      pendingMs: 1500,
      runningMs: 4000,
    }),
  });
  cfsUrl = (await sim.listen(0)).url;
});

afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.stop()));
  await sim.close();
});

afterAll(() => tmp.cleanup());

async function threeWaves(): Promise<void> {
  for (const k of [0, 1, 2]) {
    wave(k);
    // The next wave once this one's sessions exist: the waves overlap the way a rolling reboot does.
    const before = sim.history.all().length;
    await waitFor(() => sim.history.all().length > before, { timeoutMs: 20_000, what: `sessions for wave ${k}` });
  }
}

describe('another batcher against the same CFS', () => {
  it('two copies of this batcher: once either sees the other, nothing created overlaps, and never both stand down', async () => {
    const elder = startBatcher('elder');
    await noPending(60_000, 'the elder to configure the initial inventory');
    const younger = startBatcher('younger');
    await younger.waitForLine(/Rebuilt previous state/, 20_000);
    const wavesAt = Date.now();
    await threeWaves();
    // Whichever creates first is seen by the other: the younger stands down on sight of the elder's sessions, the
    // elder keeps creating and holds the younger's members (it yields only to a copy that goes on creating).
    const seen = await waitFor(() => younger.find(CONTEST)[0] ?? elder.find(CONTEST)[0], {
      timeoutMs: 20_000,
      what: 'one copy to see the other',
    });
    await noPending(90_000, 'every wave configured');
    const after = overlaps().filter((o) => o.later.created_ms > seen.at);
    const before = overlaps().filter((o) => o.later.created_ms <= seen.at);
    const firstWave = sim.history.all().find((s) => s.created_ms >= wavesAt)?.created_ms ?? wavesAt;
    const meanwhile = sim.history.all().filter((s) => s.created_ms >= firstWave && s.created_ms <= seen.at);
    const byCopy = (p: Proc): number => p.find(/Successfully submitted/, seen.at).length;
    const down = younger.find(STAND_DOWN)[0] ?? elder.find(STAND_DOWN)[0];
    report(
      `two copies: first sight ${((seen.at - firstWave) / 1000).toFixed(1)} s after the first wave session (${down ? `${down === younger.find(STAND_DOWN)[0] ? 'younger' : 'elder'} stood down` : 'the younger was the only one creating; the elder held its members'}); ${meanwhile.length} sessions created meanwhile; components in two active sessions: ${new Set(before.map((o) => o.component)).size} before, ${after.length} after; send phases that created after: elder ${byCopy(elder)}, younger ${byCopy(younger)}`,
    );
    expect(after).toEqual([]);
    // Never both standing down: the elder does not yield to a younger copy that stands down.
    expect(elder.find(STAND_DOWN).length === 0 || younger.find(STAND_DOWN).length === 0).toBe(true);
    expect(younger.alive && elder.alive).toBe(true);
  }, 180_000);

  it('beside the original (scripted): this batcher stands down, creates nothing meanwhile, and resumes when it is gone', async () => {
    const ours = startBatcher('ours');
    await noPending(60_000, 'the initial inventory configured');
    const oursNames = () => new Set(sim.history.all().map((s) => s.name));
    sim.foreign.configure({ running: true, intervalMs: 1000, batchSize: BATCH, windowMs: 2000 });
    const wavesAt = Date.now();
    await threeWaves();
    const down = await ours.waitForLine(STAND_DOWN, 20_000);
    await waitFor(() => heartbeat('ours')?.creating?.state === 'standing_down', {
      timeoutMs: 10_000,
      what: 'the heartbeat to say standing_down',
    });
    await noPending(90_000, 'every wave configured by the original');
    const foreign = new Set(sim.foreign.created);
    const created = sim.history.all().filter((s) => !foreign.has(s.name) && s.created_ms > down.at);
    const firstForeign = sim.history.get(sim.foreign.created[0]!)?.created_ms ?? wavesAt;
    const meanwhile = sim.history
      .all()
      .filter((s) => !foreign.has(s.name) && s.created_ms >= firstForeign && s.created_ms <= down.at);
    const byOriginal = overlaps().filter((o) => foreign.has(o.later.name));
    const byOurs = overlaps().filter((o) => !foreign.has(o.later.name) && o.later.created_ms > down.at);
    report(
      `beside the original: stood down ${((down.at - firstForeign) / 1000).toFixed(1)} s after its first session; ${meanwhile.length} of ours created meanwhile; ours after standing down: ${created.length} sessions, ${byOurs.length} overlaps; the original put ${new Set(byOriginal.map((o) => o.component)).size} components into a second session (ours from before)`,
    );
    expect(created).toEqual([]);
    expect(byOurs).toEqual([]);
    expect(oursNames().size).toBeGreaterThan(0);
    // The original goes away: after the quiet window this batcher creates again.
    sim.foreign.configure({ running: false });
    wave(0);
    await ours.waitForLine(/creating sessions again/, 30_000);
    await noPending(60_000, 'the last wave configured by this batcher again');
    expect(ours.alive).toBe(true);
  }, 180_000);

  it("a restart of this batcher is not another batcher: its predecessor's sessions are its own", async () => {
    const first = startBatcher('restarted');
    await noPending(60_000, 'the initial inventory configured');
    wave(0);
    const before = sim.history.all().length;
    await waitFor(() => sim.history.all().length > before, { timeoutMs: 20_000, what: 'sessions for the wave' });
    await first.stop();
    const second = startBatcher('restarted');
    const rebuilt = await second.waitForLine(/Rebuilt previous state/, 20_000);
    // The restart happened while the predecessor's sessions were active.
    expect(Number(/Found (\d+)/.exec(rebuilt.text)?.[1])).toBeGreaterThan(0);
    wave(1);
    await noPending(90_000, 'both waves configured after the restart');
    expect(second.find(/Another batcher/)).toEqual([]);
    expect(overlaps()).toEqual([]);
  }, 180_000);
});
