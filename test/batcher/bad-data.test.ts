/**
 * Bad data from CFS: ids an Ansible limit cannot express, rejections logged once, options never written back from a
 * broken answer.
 */
import { DEFAULT_OPTIONS, idProblem, newOptionsMemory, planOptions } from '@cfs-batcher/batcher';
import {
  harnessLifecycle,
  count,
  fastOptions,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness;
const logs = harnessLifecycle(() => h);

async function cycles(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    h.clock.advance(1000);
    await h.batcher.runCycle();
  }
}

const warnings = (re: RegExp) => logs.lines.filter((l) => l.level === 'WARNING' && re.test(l.message)).length;

describe('component ids that cannot be expressed in an Ansible limit or an ids= list', () => {
  it.each([
    ['x5002c0s0b0n0,x5002c0s1b0n0', /comma/],
    ['x1 x2', /whitespace/],
    ['x1\tx2', /whitespace/],
    [' ', /empty/],
    ['x1:x2', /pattern/],
    ['x*', /pattern/],
    ['~x.*', /pattern/],
  ])('idProblem(%j)', (id, why) => {
    expect(idProblem(id)).toMatch(why);
  });

  it('accepts real xnames and node names', () => {
    for (const id of ['x3000c0s1b0n0', 'ncn-w001', 'uan01.local', 'a_b-c']) expect(idProblem(id)).toBeNull();
  });

  it('rejected per component, never sent, logged at WARNING once and counted once over many cycles', async () => {
    const odd = ['x5002c0s0b0n0,x5002c0s1b0n0', 'x1 x2', ''];
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        fastOptions(sim, { batch_size: 10 });
        putComponents(sim, ['x5002c0s0b0n0', 'x5002c0s1b0n0', ...odd]);
        // A record the client's schema refuses (error_count not an integer): logged once as well.
        sim.state.putComponent({
          id: 'x9',
          desired_config: 'cfg',
          enabled: true,
          error_count: 1.5,
          state: [],
          tags: {},
        });
      },
    });
    await cycles(8);
    const limits = sessions(h.sim).flatMap((s) => s.ansible.limit.split(','));
    expect(limits.sort()).toEqual(['x5002c0s0b0n0', 'x5002c0s1b0n0']);
    expect(warnings(/Skipping component x5002c0s0b0n0,x5002c0s1b0n0: id contains a comma/)).toBe(1);
    expect(warnings(/Skipping component x1 x2: id contains whitespace/)).toBe(1);
    expect(warnings(/^Skipping invalid component record #0: /)).toBe(1); // the empty id, refused by the schema
    expect(warnings(/Skipping invalid component record x9/)).toBe(1);
    const invalid = await h.batcher.metrics.invalidRecords.get();
    expect(invalid.values.find((v) => v.labels.kind === 'component')!.value).toBe(4);
    expect(h.batcher.state.pendingSeen).toBe(2); // the two real nodes only: odd records are not schedulable work
  });

  it('a rejection is logged again when its reason changes', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        sim.state.putConfiguration({
          name: 'nopb',
          layers: [{ name: 'l0', clone_url: 'https://vcs/l0.git', commit: 'a'.repeat(40) }],
        });
        fastOptions(sim);
        sim.state.putComponent({ id: 'bad', desired_config: 'cfg', enabled: true, state: [], tags: {} });
      },
    });
    await cycles(3);
    h.sim.state.components.get('bad')!.desired_config = 'nopb';
    h.sim.state.components.get('bad')!.error_count = 0;
    await cycles(3);
    expect(warnings(/Skipping component bad: missing or invalid error_count/)).toBe(1);
    expect(warnings(/Skipping component bad: desired_state\[0\] has no playbook/)).toBe(1);
  });
});

describe("GET /v3/options answering {} or lacking the server's own options", () => {
  it("{}: nothing is PATCHed, the site's batch_window 10 stays in force and in CFS; warned once", async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        sim.state.options = { ...DEFAULT_OPTIONS, batch_window: 10 };
      },
    });
    await cycles(1);
    expect(h.batcher.state.options.batch_window).toBe(10);
    h.sim.faults.add({
      match: 'GET /v3/options',
      action: { type: 'status', status: 200, body: {} },
      scope: { times: 4 },
    });
    await cycles(5);
    expect(count(h.sim, 'PATCH /v3/options')).toBe(0);
    expect(h.batcher.state.options.batch_window).toBe(10);
    expect(h.sim.state.effectiveOptions().batch_window).toBe(10);
    expect(warnings(/lacks the server's own options/)).toBe(1);
  });

  it('a batcher option missing from an answer that had it before: kept, never written back', async () => {
    h = await startHarness({
      seed: (sim) => {
        putConfig(sim);
        sim.state.options = { ...DEFAULT_OPTIONS, batch_window: 10, batch_size: 7 };
      },
    });
    await cycles(1);
    h.sim.faults.add({
      match: 'GET /v3/options',
      action: { type: 'omit-keys', keys: ['batch_window', 'batch_size'] },
      scope: { times: 4 },
    });
    await cycles(5);
    expect(count(h.sim, 'PATCH /v3/options')).toBe(0);
    expect(h.batcher.state.options).toMatchObject({ batch_window: 10, batch_size: 7 });
    expect(h.sim.state.effectiveOptions()).toMatchObject({ batch_window: 10, batch_size: 7 });
    expect(warnings(/option batch_window is missing from an options answer that had it before; keeping 10/)).toBe(1);
  });

  it('planOptions: a key missing from one trusted answer only is not written; missing twice (a fresh CFS) it is', () => {
    const server = {
      default_playbook: 'site.yml',
      default_ansible_config: 'c',
      default_page_size: 1000,
      include_ara_links: true,
    };
    const memory = newOptionsMemory();
    const first = planOptions({ ...server, batch_size: 5 }, DEFAULT_OPTIONS, memory);
    expect(first.patch).toEqual({});
    const second = planOptions({ ...server, batch_size: 5 }, first.options, memory);
    expect(second.patch).toHaveProperty('batch_window', DEFAULT_OPTIONS.batch_window);
    expect(second.patch).not.toHaveProperty('batch_size');
    const odd = planOptions({ batch_size: 6 }, second.options, memory); // no server keys: nothing written
    expect(odd.patch).toEqual({});
    expect(odd.options.batch_size).toBe(6);
  });
});
