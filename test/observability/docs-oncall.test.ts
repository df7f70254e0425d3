/**
 * What the on-call reads agrees with what the programs do: the runbook never says a CFS outage restarts the batcher,
 * the documented promtool command runs as written where the alert tests live, and the /status fields
 * docs/CONTRACTS.md names are the ones /status has.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { setLogSilent, type HeartbeatReadResult } from '@cfs-batcher/shared';
import { configFromEnv, createSidecar } from '@cfs-batcher/sidecar-health';
import { describeWithTool } from '../helpers/requires';
import { T0, heartbeat } from '../sidecar/helpers';
import { REPO } from './promql';

const doc = (name: string): string => readFileSync(path.join(REPO, 'docs', name), 'utf8');

/** The text of a `## title` section, up to the next `## `. */
function section(text: string, title: string): string {
  const start = text.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`no section ${title}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

test('the runbook never has a CFS outage restart the batcher; CfsBatcherRestartingRepeatedly says so', () => {
  const runbook = doc('runbook.md');
  expect(runbook).not.toMatch(/restarts? caused by (a )?CFS outages?/i);
  expect(section(runbook, 'CfsBatcherRestartingRepeatedly').replace(/\s+/g, ' ')).toContain(
    'A CFS outage is never the cause',
  );
});

describeWithTool('promtool', 'promtool', () => {
  test("docs/observability.md's promtool commands run as written, from the repository root", () => {
    const blocks = [...doc('observability.md').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const recipe = blocks.find((b) => b.includes('promtool test rules'));
    expect(recipe).toBeDefined();
    const r = spawnSync('bash', ['-euc', recipe!], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.stdout).not.toContain('FAILED');
  });
});

test("the /status fields docs/CONTRACTS.md names are /status's", async () => {
  const table = section(doc('CONTRACTS.md'), 'Sidecar `/status` (on `HEALTH_PORT`)');
  const named = [...table.matchAll(/^\| ([^|]+) \|/gm)]
    .map((m) => m[1]!)
    .filter((c) => c.trim() !== 'field' && !c.startsWith('---'))
    .flatMap((c) => [...c.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
  expect(named.length).toBeGreaterThan(5);
  setLogSilent(true);
  const read = async (): Promise<HeartbeatReadResult> => ({ ok: true, heartbeat: heartbeat(), mtimeMs: T0, bytes: 1 });
  const sidecar = createSidecar(
    configFromEnv({ HEARTBEAT_PATH: '/nonexistent/hb.json', SIDECAR_CFS_POLL_SECONDS: '0' }),
    {
      clock: () => ({ wallMs: T0, monoMs: 1000 }),
      cfsClient: null,
      readHeartbeat: read,
      defaultMetrics: false,
    },
  );
  try {
    await sidecar.refresh();
    const body = (await request(sidecar.app).get('/status')).body as Record<string, unknown>;
    for (const f of named) expect([f, Object.hasOwn(body, f)]).toEqual([f, true]);
  } finally {
    await sidecar.stop();
    setLogSilent(false);
  }
});
