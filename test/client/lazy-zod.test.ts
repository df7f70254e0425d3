/**
 * zod is loaded only for an unusual answer (shared/src/lazy-zod.ts): a child process with the built client goes
 * through every call the batcher makes against healthy answers without loading it, then gets malformed answers and
 * must still refuse them with what was wrong (zod loaded then, and only then).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const SHARED = path.join(ROOT, 'shared/dist/index.js');
const BATCHER_START = path.join(ROOT, 'batcher/dist/start.js');

const CHILD = `
const http = require('node:http');
const shared = require(process.env.SHARED);
const loaded = (name) => Object.keys(require.cache).some((k) => k.includes('/node_modules/' + name + '/'));
const component = { id: 'x1', desired_config: 'c', enabled: true, error_count: 0, tags: {}, state: [],
  desired_state: [{ name: 'l', clone_url: 'u', commit: 'h', playbook: 'p.yml', status: 'pending' }],
  configuration_status: 'pending', logs: '' };
const session = { name: 'batcher-1', configuration: { name: 'c', limit: '' }, ansible: { config: 'a', limit: 'x1',
  verbosity: 0, passthrough: null }, target: { definition: 'dynamic', groups: [] }, status: { artifacts: [],
  session: { job: null, start_time: 't', completion_time: null, status: 'pending', succeeded: 'none' } }, tags: {} };
let bad = false;
const server = http.createServer((req, res) => {
  let body;
  if (req.url.startsWith('/v3/components?') || req.url === '/v3/components')
    body = { components: bad ? [{ id: 'x2', error_count: 'three' }] : [component], next: null };
  else if (req.url.startsWith('/v3/components/')) body = component;
  else if (req.url.startsWith('/v3/sessions/')) body = bad ? { name: 'batcher-1', ansible: { limit: 7 } } : session;
  else if (req.url.startsWith('/v3/sessions')) body = req.method === 'POST' ? session : { sessions: [session], next: null };
  else if (req.url.startsWith('/v3/options')) body = bad ? ['not', 'options'] : { batch_size: 25 };
  else { res.statusCode = 404; body = {}; }
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
});
server.listen(0, '127.0.0.1', async () => {
  const client = new shared.CfsClient({ baseUrl: 'http://127.0.0.1:' + server.address().port + '/v3', retryBudgetMs: 0 });
  const out = { before: loaded('zod'), errors: [] };
  await client.listAllComponents({ status: 'pending' });
  await client.getComponent('x1');
  await client.patchComponent('x1', { state_append: {} });
  await client.listAllSessions({ name_contains: 'batcher-' });
  await client.getSession('batcher-1');
  await client.createSession({ name: 'batcher-1', configuration_name: 'c' });
  await client.getOptions();
  out.healthy = loaded('zod');
  bad = true;
  const page = await client.listAllComponents({ status: 'pending' });
  out.invalid = page.invalid.map((i) => i.problem);
  for (const call of [() => client.getSession('batcher-1'), () => client.getOptions()]) {
    try { await call(); out.errors.push('accepted'); } catch (e) { out.errors.push(e.kind + ': ' + e.message); }
  }
  out.after = loaded('zod');
  console.log(JSON.stringify(out));
  server.close();
});
`;

interface ChildResult {
  before: boolean;
  healthy: boolean;
  after: boolean;
  invalid: string[];
  errors: string[];
}

describe('zod is loaded only for an unusual answer', () => {
  beforeAll(() => {
    for (const f of [SHARED, BATCHER_START])
      if (!existsSync(f)) throw new Error(`${f} missing: run \`npm run build\` first`);
  });

  test('healthy answers never load it; malformed ones are still refused with what was wrong', () => {
    const r = spawnSync(process.execPath, ['-e', CHILD], {
      env: { ...process.env, SHARED, CFS_LOG_LEVEL: 'ERROR' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('{"before"'));
    expect(line).toBeDefined();
    const out = JSON.parse(line!) as ChildResult;
    expect(out.before).toBe(false);
    expect(out.healthy).toBe(false);
    expect(out.invalid).toEqual([expect.stringContaining('error_count')]);
    expect(out.errors).toEqual([
      expect.stringMatching(/^invalid-response: .*ansible\.limit/),
      expect.stringMatching(/^invalid-response: /),
    ]);
    expect(out.after).toBe(true);
  });

  test("the batcher's own modules do not load it", () => {
    const probe = `require(${JSON.stringify(BATCHER_START)});
      console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('/node_modules/zod/')).length));`;
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').pop()).toBe('0');
  });
});
