/**
 * Contract: every request the client can send conforms to the CFS v3 contract document (paths, query parameters and
 * their types, request bodies). The client talks to a recording server on 127.0.0.1; each captured request is
 * validated with Ajv against the dereferenced document.
 */
import { CfsClient } from '@cfs-batcher/shared';
import { json, startFakeServer, type FakeServer } from '../client/fake-server';
import { loadSpecValidator, type SpecValidator } from './spec';

let server: FakeServer;
let spec: SpecValidator;

beforeAll(async () => {
  spec = await loadSpecValidator();
});
beforeEach(async () => {
  server = await startFakeServer();
  server.on('GET /v3/components', json(200, { components: [], next: null }));
  server.on('GET /v3/components/x1', json(200, { id: 'x1' }));
  server.on('PATCH /v3/components/x1', json(200, { id: 'x1' }));
  server.on('GET /v3/sessions', json(200, { sessions: [], next: null }));
  server.on('GET /v3/sessions/batcher-1', json(200, { name: 'batcher-1' }));
  server.on('DELETE /v3/sessions/batcher-1', (_q, res) => {
    res.writeHead(204);
    res.end();
  });
  server.on('POST /v3/sessions', json(201, { name: 'batcher-1' }));
  server.on('GET /v3/options', json(200, {}));
  server.on('PATCH /v3/options', json(200, {}));
  server.on('GET /v3/configurations/c1', json(200, { name: 'c1', layers: [] }));
});
afterEach(() => server.close());

const body = (raw: string): unknown => (raw === '' ? undefined : JSON.parse(raw));

it('every kind of request the client sends validates against the spec', async () => {
  const c = new CfsClient({ baseUrl: server.baseUrl, retryBudgetMs: 0 });
  await c.listAllComponents(
    { enabled: true, status: 'pending', config_details: true, state_details: true },
    { pageSize: 1000 },
  );
  await c.listAllComponents({ ids: ['x1', 'x2'], config_name: 'c1', tags: { bos_session: 'b1' } });
  await c.getComponent('x1', { config_details: true, state_details: true });
  await c.patchComponent('x1', {
    state_append: {
      clone_url: 'https://vcs/cray/a.git',
      playbook: 'site.yml',
      commit: 'a'.repeat(40),
      status: 'skipped',
      session_name: 'batcher-1',
    },
  });
  await c.patchComponent('x1', {
    state_append: {
      clone_url: 'https://vcs/cray/a.git',
      playbook: 'site.yml',
      commit: 'a'.repeat(40),
      status: 'failed',
      session_name: 'batcher-1',
    },
    error_count: 2,
  });
  await c.listAllSessions({ name_contains: 'batcher-', status: 'running' }, { pageSize: 500 });
  await c.listAllSessions({ limit: 1 });
  await c.listAllSessions({ succeeded: 'false', min_age: '1h', tags: { bos_session: 'b1' } });
  await c.getSession('batcher-1');
  await c.createSession({
    name: 'batcher-2df030b8-1bc5-4afb-ac29-df93815473f2',
    configuration_name: 'c1',
    configuration_limit: '0,1',
    ansible_limit: 'x1,x2',
    target: { definition: 'dynamic' },
    tags: { bos_session: 'b1' },
  });
  await c.deleteSession('batcher-1');
  await c.getOptions();
  await c.patchOptions({ batch_size: 25, batcher_disable: false, logging_level: 'INFO' });
  await c.getConfiguration('c1');

  expect(server.seen.length).toBe(14);
  const problems = server.seen.flatMap((s) =>
    spec.checkRequest(s.method, s.url, body(s.body)).map((p) => `${s.method} ${s.url}: ${p}`),
  );
  expect(problems).toEqual([]);
});

it('the validator is really on: a request the spec forbids is reported', () => {
  expect(spec.checkRequest('GET', '/v3/components?status=bogus', undefined).length).toBeGreaterThan(0);
  expect(spec.checkRequest('GET', '/v3/components?after=x1', undefined)).toEqual([
    'query parameter after is not declared for get_components_v3',
  ]);
  expect(
    spec.checkRequest('POST', '/v3/sessions', { name: 'Bad_Name', configuration_name: 'c' }).length,
  ).toBeGreaterThan(0);
  expect(
    spec.checkRequest('PATCH', '/v3/components/x1', { state_append: { status: 'pending' } }).length,
  ).toBeGreaterThan(0);
  expect(spec.checkRequest('PATCH', '/v3/options', { batch_size: 0 }).length).toBeGreaterThan(0);
});
