/**
 * Contract, both ways at once: the real client drives every call it has against the simulator while the simulator
 * validates each request and each of its responses against the CFS v3 contract document (express-openapi-validator); the
 * client's own zod schemas must accept every answer. Any rejection on either side fails the test.
 */
import { CfsClient, CfsError, setLogSilent } from '@cfs-batcher/shared';
import { createSimulator, type Simulator } from '@cfs-batcher/cfs-sim';

setLogSilent(true);
const REPO = 'https://api-gw-service-nmn.local/vcs/cray/cos-config-management.git';
const SHA = 'c'.repeat(40);

let sim: Simulator;
let client: CfsClient;

beforeAll(async () => {
  sim = createSimulator({ operator: { paused: true }, validateWithSpec: true });
  sim.state.putConfiguration({
    name: 'cfg',
    layers: [{ name: 'cos', clone_url: REPO, commit: SHA, playbook: 'site.yml' }],
  });
  for (let i = 0; i < 7; i++) {
    sim.state.putComponent({
      id: `x3000c0s${i}b0n0`,
      desired_config: 'cfg',
      enabled: true,
      error_count: 0,
      state: [],
      tags: { bos_session: 'b1' },
    });
  }
  const { url } = await sim.listen(0);
  client = new CfsClient({ baseUrl: url, retryBudgetMs: 0 });
});
afterAll(() => sim.close());

it('has the spec validator on', () => expect(sim.validating).toBe(true));

it('every client call against the simulator passes spec validation both ways', async () => {
  const pending = await client.listAllComponents(
    { enabled: true, status: 'pending', config_details: true, state_details: true },
    { pageSize: 3 },
  );
  expect(pending.components).toHaveLength(7);
  expect(pending.invalid).toEqual([]);
  const byIds = await client.listAllComponents({
    ids: ['x3000c0s1b0n0', 'x3000c0s2b0n0'],
    status: 'pending',
    config_details: true,
    state_details: true,
  });
  expect(byIds.components.map((c) => c.id)).toEqual(['x3000c0s1b0n0', 'x3000c0s2b0n0']);
  await client.listAllComponents({ config_name: 'cfg', tags: { bos_session: 'b1' } });
  const one = await client.getComponent('x3000c0s0b0n0', { config_details: true, state_details: true });
  expect(one.desired_state?.[0]?.status).toBe('pending');
  await client.patchComponent('x3000c0s0b0n0', {
    state_append: { clone_url: REPO, playbook: 'site.yml', commit: SHA, status: 'skipped', session_name: 'batcher-1' },
  });
  await client.patchComponent('x3000c0s1b0n0', {
    state_append: { clone_url: REPO, playbook: 'site.yml', commit: SHA, status: 'failed', session_name: 'batcher-1' },
    error_count: 1,
  });
  const created = await client.createSession({
    name: 'batcher-2df030b8-1bc5-4afb-ac29-df93815473f2',
    configuration_name: 'cfg',
    configuration_limit: '0',
    ansible_limit: 'x3000c0s2b0n0,x3000c0s3b0n0',
    target: { definition: 'dynamic' },
    tags: { bos_session: 'b1' },
  });
  expect(created.status?.session?.status).toBe('pending');
  await client.createSession({
    name: 'batcher-0f1e2d3c-1bc5-4afb-ac29-df93815473f2',
    configuration_name: 'cfg',
    configuration_limit: '0',
    ansible_limit: 'x3000c0s4b0n0',
    target: { definition: 'dynamic' },
  });
  const listed = await client.listAllSessions({ name_contains: 'batcher-' }, { pageSize: 1 });
  expect(listed.sessions).toHaveLength(2);
  await client.listAllSessions({ status: 'pending', succeeded: 'none', tags: { bos_session: 'b1' } });
  await client.listAllSessions({ limit: 1 });
  expect((await client.getSession(created.name)).name).toBe(created.name);
  await client.deleteSession(created.name);
  await expect(client.getSession(created.name)).rejects.toMatchObject({ kind: 'http', status: 404 });
  await client.patchOptions({
    batch_size: 25,
    batcher_disable: false,
    logging_level: 'INFO',
    batcher_check_interval: 10,
  });
  expect((await client.getOptions()).batch_size).toBe(25);
  expect((await client.getConfiguration('cfg')).layers).toHaveLength(1);

  expect(sim.validationErrors).toEqual([]);
});

it('server-side rejections reach the caller as typed errors', async () => {
  const err = await client
    .createSession({ name: 'batcher-x', configuration_name: 'no-such-config' })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CfsError);
  expect(err).toMatchObject({ kind: 'http', status: 400 });
  sim.validationErrors.length = 0;
});
