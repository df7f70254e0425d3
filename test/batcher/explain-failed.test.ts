/**
 * GET /explain/{id} for what an on-call asks most: a node CFS stopped retrying (the last session that ran it, the
 * layer that failed by its configuration name, when, and the command that retries it), a configured node whose
 * last layer was skipped, the layer names of a batch, and an id with a space that CFS really holds. Each test
 * drives the real batcher against the simulator.
 */
import { ask, cycles, drive, explainApp, memoryAsker } from './explain-harness';
import { count, fastOptions, harnessLifecycle, putComponents, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);
const askMemory = memoryAsker(() => h);

const LOOKUP = 'GET /v3/components/{component_id}';
const LAYERS = ['base', 'slingshot', 'cos'];

/** A configuration `cfg` of three named layers. */
function putNamedConfig(sim: Harness['sim']): void {
  sim.state.putConfiguration({
    name: 'cfg',
    layers: LAYERS.map((name, i) => ({
      name,
      clone_url: `https://vcs/${name}.git`,
      commit: `${i}`.repeat(40),
      playbook: 'site.yml',
    })),
  });
}

async function askCfs(id: string) {
  const before = count(h.sim, LOOKUP);
  const a = await ask(explainApp(h).app, id);
  expect(count(h.sim, LOOKUP)).toBe(before + 1);
  expect(a.body.source).toBe('cfs');
  return a;
}

drive(
  'not_batched',
  'retry_limit',
  'the last session, the failed layer by name, when, and the retry command',
  async () => {
    h = await startHarness({
      seed: (sim) => {
        putNamedConfig(sim);
        fastOptions(sim);
        putComponents(sim, ['x3000c0s1b0n0']);
      },
    });
    h.sim.operator.setComponentOutcome('x3000c0s1b0n0', 'fail', 1);
    for (let round = 0; round < 10 && h.sim.state.components.get('x3000c0s1b0n0')!.error_count! < 3; round++) {
      await cycles(h, 2);
      h.sim.operator.runToCompletion();
    }
    await cycles(h, 1);
    const last = [...h.sim.state.sessions.keys()].at(-1)!;
    const entry = h.sim.state.components.get('x3000c0s1b0n0')!.state!.find((e) => e.status === 'failed')!;
    const a = await askCfs('x3000c0s1b0n0');
    expect(a.body.reason).toContain(
      `its last session, ${last}, failed layer 1 (slingshot) of cfg at ${entry.last_updated}.`,
    );
    expect(a.body.reason).toContain(`that session's logs (cray cfs v3 sessions describe ${last})`);
    expect(a.body.reason).toContain(
      `retry with: cray cfs v3 components update x3000c0s1b0n0 --error-count 0 (without the CLI: PATCH ${h.url}/components/x3000c0s1b0n0 {"error_count":0})`,
    );
    expect(a.body.last_session).toMatchObject({
      name: last,
      status: 'failed',
      at: entry.last_updated,
      layer: { index: 1, name: 'slingshot', clone_url: 'https://vcs/slingshot.git' },
    });
    expect(a.body.retry).toEqual({
      cli: 'cray cfs v3 components update x3000c0s1b0n0 --error-count 0',
      patch: { method: 'PATCH', url: `${h.url}/components/x3000c0s1b0n0`, body: { error_count: 0 } },
    });
    return a;
  },
);

drive('not_pending', null, 'configured with its last layer skipped: what skipped means and what to do', async () => {
  h = await startHarness({
    seed: (sim) => {
      putNamedConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1', 'x2']);
    },
  });
  h.sim.operator.setComponentOutcome('x2', 'skip');
  await cycles(h, 2);
  const name = [...h.sim.state.sessions.keys()][0]!;
  h.sim.operator.runToCompletion();
  await cycles(h, 2);
  const a = await askCfs('x2');
  expect(a.body.last_session).toMatchObject({ name, status: 'skipped' });
  expect(a.body.reason).toContain(`its last batcher session was ${name} (skipped).`);
  expect(a.body.reason).toContain(
    `Skipped means ${name} succeeded but Ansible recorded nothing for this node (no play in the layer targeted it`,
  );
  return a;
});

drive('waiting_for_batch', null, 'a batch names its layers as the configuration does', async () => {
  h = await startHarness({
    seed: (sim) => {
      putNamedConfig(sim);
      fastOptions(sim, { batch_window: 600 });
      putComponents(sim, ['x1']);
    },
  });
  await cycles(h, 1);
  const a = await askMemory('x1');
  expect(a.body.reason).toMatch(
    /^Waiting for batch cfg layers 0-2 \(base, slingshot, cos\), 1 of 25 members; it is sent at /,
  );
  expect(a.body.batch).toMatchObject({ layers: '0,1,2', layer_names: LAYERS });
  return a;
});

drive('not_batched', 'bad_id', 'an id with a space that CFS holds is answered, not refused', async () => {
  const spaced = 'x5002c0s0b0n0 x5002c0s1b0n0';
  h = await startHarness({
    seed: (sim) => {
      putNamedConfig(sim);
      fastOptions(sim);
      putComponents(sim, [spaced]);
    },
  });
  // before the first collect CFS is asked (the id percent-encoded in the lookup)
  const fromCfs = await askCfs(spaced);
  expect(fromCfs.status).toBe(200);
  expect(fromCfs.body.id).toBe(spaced);
  await cycles(h, 1);
  const a = await askMemory(spaced);
  expect(a.body.reason).toBe(
    'Not batched: the id contains whitespace (it cannot be expressed in an Ansible limit), so no session can target it; rename the component in CFS.',
  );
  return a;
});
