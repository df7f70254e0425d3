import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createSimulator, loadScenarioFile, parseScenario, ScenarioError } from '@cfs-batcher/cfs-sim';
import './helpers';

const DEMO = path.join(__dirname, '..', '..', 'cfs-sim', 'scenarios', 'demo.json');
const HOSTILE = path.join(__dirname, '..', '..', 'cfs-sim', 'scenarios', 'hostile.json');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cfs-sim-scenario-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('scenario loading', () => {
  it('loads the demo inventory', async () => {
    const sim = createSimulator({ scenario: DEMO, operator: { paused: true } });
    try {
      expect(sim.state.components.size).toBe(60);
      expect(sim.state.configurations.size).toBe(3);
      const pending = await request(sim.app).get('/v3/components?status=pending&enabled=true');
      expect(pending.body.components.length).toBeGreaterThan(40);
      const tagged = await request(sim.app).get('/v3/components?tags=bos_session=9fea7f3f-0a77-40b9-892d-37712de51d65');
      expect(tagged.body.components).toHaveLength(24);
    } finally {
      await sim.close();
    }
  });

  it('loads the hostile scenario: odd ids, slow operator, its faults', async () => {
    const sim = createSimulator({ scenario: HOSTILE, operator: { paused: true } });
    try {
      expect(sim.state.components.has('x5002c0s0b0n0,x5002c0s1b0n0')).toBe(true);
      expect(sim.operator.settings.maxStartsPerSecond).toBe(4);
      expect(sim.faults.list().map((f) => f.id)).toContain('late-commit');
    } finally {
      await sim.close();
    }
  });

  it.each([
    ['not JSON', '{"components": [', /demo-bad\.json: not valid JSON/],
    ['wrong type', '{"components": [{"id": 5}]}', /components\.0\.id: .*string/],
    ['unknown top-level key', '{"componets": []}', /\(root\): .*componets/],
    ['duplicate id', '{"components": [{"id": "a"}, {"id": "a"}]}', /components\.1\.id: duplicate component id 'a'/],
    [
      'unknown outcome',
      '{"components": [{"id": "a"}], "outcomes": {"components": [{"id": "a", "outcome": "boom"}]}}',
      /outcomes\.components\.0\.outcome/,
    ],
    [
      'outcome for an unknown component',
      '{"outcomes": {"components": [{"id": "zz", "outcome": "fail"}]}}',
      /unknown component 'zz'/,
    ],
    ['bad option range', '{"options": {"batch_size": 0}}', /options\.batch_size/],
    [
      'bad fault rule',
      '{"faults": [{"match": "GET /v3/sessions", "action": {"type": "status"}}]}',
      /faults\.0\.action/,
    ],
    ['bad session mode', '{"outcomes": {"sessions": [{"mode": "sometimes"}]}}', /outcomes\.sessions\.0\.mode/],
  ])('rejects %s with an error naming the problem', (_name, text, pattern) => {
    const p = file('demo-bad.json', text);
    expect(() => loadScenarioFile(p)).toThrow(ScenarioError);
    expect(() => loadScenarioFile(p)).toThrow(pattern);
  });

  it('names a missing file', () => {
    expect(() => createSimulator({ scenario: path.join(dir, 'missing.json') })).toThrow(
      /missing\.json: cannot read file/,
    );
  });

  it('applies options, operator settings, outcomes and faults', async () => {
    const sc = parseScenario({
      options: { batch_size: 10 },
      operator: { pendingMs: 7, runningMs: 9, paused: true },
      configurations: [
        { name: 'c', layers: [{ clone_url: 'https://h/r.git', commit: 'a'.repeat(40), playbook: 'site.yml' }] },
      ],
      components: [{ id: 'a', desired_config: 'c', enabled: true, error_count: 0 }],
      outcomes: { components: [{ id: 'a', outcome: 'fail' }], sessions: [{ mode: 'hang_running', count: 1 }] },
      faults: [{ match: 'GET /v3/healthz', action: { type: 'status', status: 500 } }],
    });
    const sim = createSimulator({ scenario: sc });
    try {
      expect(sim.operator.settings).toMatchObject({ pendingMs: 7, runningMs: 9 });
      expect(sim.operator.paused).toBe(true);
      expect((await request(sim.app).get('/v3/options')).body.batch_size).toBe(10);
      expect(sim.operator.outcomeFor('a', 'c', 0)).toBe('fail');
      expect(sim.faults.list()).toHaveLength(1);
    } finally {
      await sim.close();
    }
  });

  it('generate section', () => {
    const sim = createSimulator({
      scenario: { generate: { components: 300, configurations: 2, taggedFraction: 0.5 } },
    });
    expect(sim.state.components.size).toBe(300);
    expect([...sim.state.components.values()].filter((c) => c.tags?.bos_session).length).toBe(150);
    return sim.close();
  });
});
