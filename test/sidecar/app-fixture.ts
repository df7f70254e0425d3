/**
 * The sidecar app under test: a sidecar on a temporary heartbeat file, a fake clock and a scripted fake CFS, set up
 * afresh before each test by sidecarAppLifecycle(). The tests read the bindings below directly; ES module bindings are
 * live, so each sees the values of the test that is running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setLogSilent, writeHeartbeat, type Heartbeat } from '@cfs-batcher/shared';
import {
  configFromEnv,
  createSidecar,
  type Now,
  type Sidecar,
  type SidecarCfsClient,
} from '@cfs-batcher/sidecar-health';
import { T0, heartbeat } from './helpers';

/** A fake CFS client: scripted answers, and a count of calls so tests can prove probes never reach CFS. */
function fakeCfs(state: { pending: boolean; active: boolean; down: boolean }) {
  const calls = { components: 0, sessions: 0 };
  const client: SidecarCfsClient = {
    listComponents: async function* () {
      calls.components++;
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
      yield { components: state.pending ? [{ id: 'x1' }] : [], invalid: [] };
    } as SidecarCfsClient['listComponents'],
    listSessions: async function* () {
      calls.sessions++;
      yield { sessions: state.active ? [{ name: 'batcher-1' }] : [], invalid: [] };
    } as SidecarCfsClient['listSessions'],
  };
  return { client, calls };
}

export let dir: string;
export let hbPath: string;
export let now: Now;
export let sidecar: Sidecar;
export let cfsState: { pending: boolean; active: boolean; down: boolean };
export let cfs: ReturnType<typeof fakeCfs>;
export let seq = 1;

export const advance = (ms: number): void => {
  now = { wallMs: now.wallMs + ms, monoMs: now.monoMs + ms };
};
export const write = async (over: Partial<Heartbeat> = {}): Promise<void> => {
  await writeHeartbeat(
    hbPath,
    heartbeat({
      sequence: seq++,
      written_at_ms: now.wallMs,
      phase_started_at_ms: now.wallMs,
      started_at_ms: T0,
      ...over,
    }),
  );
};

/** Runs a healthy batcher past the sidecar's startup grace. */
export const warmUp = async (): Promise<void> => {
  for (let i = 0; i < 13; i++) {
    advance(5000);
    await write();
    await sidecar.refresh();
  }
  expect(sidecar.evaluation()?.verdict.details.inStartupGrace).toBe(false);
};

/** Silences the logs for the block, and builds a fresh sidecar before each test (stopped and removed after it). */
export function sidecarAppLifecycle(): void {
  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-app-'));
    hbPath = path.join(dir, 'heartbeat.json');
    now = { wallMs: T0, monoMs: 5000 };
    seq = 1;
    cfsState = { pending: false, active: false, down: false };
    cfs = fakeCfs(cfsState);
    const config = configFromEnv({ HEARTBEAT_PATH: hbPath, HEALTH_PORT: '0', HEALTH_HOST: '127.0.0.1' });
    sidecar = createSidecar(config, { clock: () => now, cfsClient: cfs.client, defaultMetrics: false });
  });
  afterEach(async () => {
    await sidecar.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}
