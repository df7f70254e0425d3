/**
 * GET /explain/{id} answered from the batcher's memory for a component collect will not batch: each test drives
 * the real batcher against the simulator with one such record (invalid record, comma id) and checks the answer
 * says what is wrong. No CFS lookup is made for an id the memory holds.
 */
import { cycles, drive, memoryAsker } from './explain-harness';
import { fastOptions, harnessLifecycle, putComponents, putConfig, startHarness, type Harness } from './harness';

let h: Harness;
harnessLifecycle(() => h);
const askMemory = memoryAsker(() => h);

drive('not_batched', 'invalid_record', 'a record collect skips: the field that is wrong', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      sim.state.putConfiguration({
        name: 'nopb',
        layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: 'a'.repeat(40) }],
      });
      fastOptions(sim);
      sim.state.putComponent({ id: 'bad', desired_config: 'nopb', enabled: true, error_count: 0, state: [], tags: {} });
    },
  });
  await cycles(h, 1);
  const a = await askMemory('bad');
  expect(a.body.reason).toBe(
    'Not batched: its CFS record is unusable (desired_state[0] has no playbook); fix the record or its configuration in CFS and the next collect files it.',
  );
  return a;
});

drive('not_batched', 'bad_id', 'an id with a comma: no Ansible limit can carry it', async () => {
  const comma = 'x5002c0s0b0n0,x5002c0s1b0n0';
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, [comma]);
    },
  });
  await cycles(h, 1);
  const a = await askMemory(comma);
  expect(a.body.id).toBe(comma);
  expect(a.body.reason).toBe(
    'Not batched: the id contains a comma (it cannot be expressed in an Ansible limit), so no session can target it; rename the component in CFS.',
  );
  return a;
});
