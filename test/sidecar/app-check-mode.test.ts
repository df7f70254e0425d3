/**
 * The sidecar's check mode (standalone): the built CLI exits 0 for a fresh heartbeat and 1 for a stale one, and
 * standaloneCheck judges one read by its written_at alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeHeartbeat } from '@cfs-batcher/shared';
import { configFromEnv, standaloneCheck } from '@cfs-batcher/sidecar-health';
import { T0, heartbeat } from './helpers';
import { requireBuilt } from '../helpers/built';

describe('check mode (standalone)', () => {
  const main = path.resolve(__dirname, '..', '..', 'sidecar-health', 'dist', 'main.js');
  it('the CLI exits 0 for a fresh heartbeat and 1 for a stale one', async () => {
    requireBuilt(main);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-cli-'));
    try {
      const hbPath = path.join(dir, 'hb.json');
      const run = () =>
        spawnSync(process.execPath, [main, 'check', '--standalone'], {
          env: { PATH: process.env.PATH, HEARTBEAT_PATH: hbPath },
          encoding: 'utf8',
          timeout: 10_000,
        });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: Date.now(), started_at_ms: Date.now() }));
      const good = run();
      expect(good.status).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, source: 'standalone', reason: 'ok' });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: Date.now() - 120_000 }));
      const stale = run();
      expect(stale.status).toBe(1);
      expect(JSON.parse(stale.stdout)).toMatchObject({ ok: false, reason: 'heartbeat_stale' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('judges one read by written_at alone and exits 0/1 accordingly', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-check-'));
    try {
      const hbPath = path.join(dir, 'hb.json');
      const config = configFromEnv({ HEARTBEAT_PATH: hbPath });
      const now = { wallMs: T0 + 10_000, monoMs: 1e6 };
      expect(await standaloneCheck(config, 'live', now)).toMatchObject({
        ok: false,
        body: { reason: 'heartbeat_missing' },
      });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: T0 + 5000 }));
      expect(await standaloneCheck(config, 'live', now)).toMatchObject({ ok: true, body: { reason: 'ok' } });
      expect(await standaloneCheck(config, 'live', { wallMs: T0 + 50_000, monoMs: 1e6 })).toMatchObject({
        ok: false,
        body: { reason: 'heartbeat_stale' },
      });
      // one read: the file's own age stands for "seen advancing", and the gate wants a few seconds at most
      expect(await standaloneCheck(config, 'startup', now)).toMatchObject({ ok: false });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: T0 + 9000 }));
      expect(await standaloneCheck(config, 'startup', now)).toMatchObject({ ok: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
