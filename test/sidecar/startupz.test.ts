/**
 * The real sidecar program and /startupz: a healthy batcher 66 s old (a sidecar that came up late, or restarted
 * beside it) passes the startup gate as soon as the sidecar sees its loop advance; /status speaks of that instance,
 * not of a "new instance" to wait for; a file that never advances keeps the gate shut.
 */
import path from 'node:path';
import { writeHeartbeat } from '@cfs-batcher/shared';
import { requireBuilt } from '../helpers/built';
import { getJson, request } from '../helpers/http';
import { freePort } from '../helpers/ports';
import { REPO_ROOT, killAll, spawnNode } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { heartbeat } from './helpers';

requireBuilt(path.join(REPO_ROOT, 'sidecar-health/dist/main.js'));
afterAll(killAll);

async function sidecarOn(hbPath: string): Promise<string> {
  const port = await freePort();
  const p = spawnNode({
    name: 'sidecar',
    script: 'sidecar-health/dist/main.js',
    env: { HEARTBEAT_PATH: hbPath, HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1', SIDECAR_CFS_POLL_SECONDS: '0' },
  });
  await p.waitForLine((l) => /Health sidecar listening/.test(l.text), 30_000);
  return `http://127.0.0.1:${port}`;
}

describe('/startupz of the sidecar program', () => {
  it('opens for a healthy batcher 66 s old once its loop is seen advancing, and /status names that instance', async () => {
    const tmp = makeTempDir('startupz');
    const hbPath = path.join(tmp.dir, 'heartbeat.json');
    const startedAt = Date.now() - 66_000;
    let seq = 500;
    const beat = (): Promise<void> =>
      writeHeartbeat(
        hbPath,
        heartbeat({
          instance_id: 'steady',
          started_at_ms: startedAt,
          written_at_ms: Date.now(),
          phase_started_at_ms: Date.now(),
          sequence: seq++,
          cycle: 6,
        }),
      );
    await beat();
    const beating = setInterval(() => void beat(), 500);
    try {
      const url = await sidecarOn(hbPath);
      const ready = await waitFor(
        async () => {
          const r = await request(`${url}/startupz`, { timeoutMs: 2000 });
          return r.status === 200 ? r : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: '/startupz to open for the 66 s old batcher' },
      );
      expect('json' in ready && (ready.json as { message: string }).message).toMatch(
        /^instance steady \(started 6\d s ago\) is alive/,
      );
      const st = await getJson<{ startup: { ready: boolean; message: string } }>(`${url}/status`);
      expect(st.startup.ready).toBe(true);
      expect(st.startup.message).not.toMatch(/waiting for the new instance/);
    } finally {
      clearInterval(beating);
      await killAll();
      tmp.cleanup();
    }
  }, 60_000);

  it('stays shut on a file that never advances, and says so about that instance', async () => {
    const tmp = makeTempDir('startupz-frozen');
    const hbPath = path.join(tmp.dir, 'heartbeat.json');
    await writeHeartbeat(
      hbPath,
      heartbeat({ instance_id: 'gone', started_at_ms: Date.now() - 600_000, written_at_ms: Date.now(), sequence: 9 }),
    );
    try {
      const url = await sidecarOn(hbPath);
      // three evaluations of the same file (the sidecar evaluates every second)
      const st = await waitFor(
        async () => {
          const s = await getJson<{ startup: { ready: boolean; message: string }; heartbeat: { instance_id: string } }>(
            `${url}/status`,
          );
          return s.heartbeat.instance_id === 'gone' && / first read it [3-9]\.\d s ago/.test(s.startup.message)
            ? s
            : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: 'three evaluations of the frozen file' },
      );
      expect(st.startup).toMatchObject({ ready: false });
      expect(st.startup.message).toMatch(
        /^instance gone \(started 6\d\d s ago\): its heartbeat \(sequence 9\) has not advanced/,
      );
      expect((await request(`${url}/startupz`, { timeoutMs: 2000 })).status).toBe(503);
    } finally {
      await killAll();
      tmp.cleanup();
    }
  }, 60_000);
});
