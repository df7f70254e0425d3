/**
 * Every program refuses an unsupported Node.js at start with one line naming the version found and the one needed
 * (shared/src/node-version.ts), instead of failing deep in a dependency. Run the way a user would: the built program
 * under an older Node (the machine's own node when it is older, and always the pinned Node pretending to be 20 through
 * a preload), and under the pinned Node, where it starts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NODE_VERSION_NEEDED, nodeVersionProblem } from '@cfs-batcher/shared/node-version';
import { requireBuilt } from '../helpers/built';
import { REPO_ROOT } from '../helpers/proc';
import { which } from '../helpers/requires';
import { makeTempDir } from '../helpers/tmp';

const PROGRAMS = [
  'batcher/dist/main.js',
  'batcher/dist/explain.js',
  'sidecar-health/dist/main.js',
  'cfs-sim/dist/main.js',
  'scripts/dist/local-pod.js',
  'scripts/dist/bench.js',
  'scripts/dist/images.js',
];
const tmp = makeTempDir('nodever');
afterAll(() => tmp.cleanup());

function run(node: string, args: string[]): { status: number | null; lines: string[] } {
  const r = spawnSync(node, args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH },
  });
  return { status: r.status, lines: `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '') };
}

function expectRefused(r: { status: number | null; lines: string[] }, found: string): void {
  expect(r.status).toBe(2);
  expect(r.lines).toHaveLength(1);
  const line = JSON.parse(r.lines[0]!) as { level: string; message: string };
  expect(line.level).toBe('ERROR');
  expect(line.message).toBe(`Unsupported Node.js ${found}: this program needs Node.js ${NODE_VERSION_NEEDED} or newer`);
}

describe('the Node.js version check', () => {
  it('needs what package.json engines says, and compares versions numerically', () => {
    const engines = (
      JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
    ).engines.node;
    expect(engines).toBe(`>=${NODE_VERSION_NEEDED}`);
    expect(nodeVersionProblem('20.20.2')).toMatch(/20\.20\.2.*24\.11\.0/);
    expect(nodeVersionProblem('24.10.9')).not.toBeNull();
    expect(nodeVersionProblem('24.11.0')).toBeNull();
    expect(nodeVersionProblem('25.0.0')).toBeNull();
    expect(nodeVersionProblem('v100.0.0')).toBeNull();
  });

  it.each(PROGRAMS)('%s: refused on Node 20 with one line, past the check on the pinned Node', (program) => {
    requireBuilt(program);
    const preload = path.join(tmp.dir, 'node20.js');
    writeFileSync(
      preload,
      "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.20.2' } });\n",
    );
    expectRefused(run(process.execPath, ['--require', preload, program, '--help']), '20.20.2');
    // Past the check on the pinned Node: the program's own answer to --help (usage, or its refusal of the flag).
    const ok = run(process.execPath, [program, '--help']);
    expect(ok.lines.length).toBeGreaterThan(0);
    expect(ok.lines.join('\n')).not.toMatch(/Unsupported Node/);
  });

  // The machine's own node, when it is older than the pinned one (Debian bookworm's is 18, this machine's 20).
  const system = which(
    'node',
    (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((d) => !d.includes('node_modules'))
      .join(path.delimiter),
  );
  const systemVersion = system
    ? execFileSync(system, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '')
    : '';
  const older = system !== undefined && nodeVersionProblem(systemVersion) !== null;
  (older ? it : it.skip)(`under the machine's own node (${systemVersion || 'none'}) every program is refused`, () => {
    for (const program of PROGRAMS) expectRefused(run(system!, [program, '--help']), systemVersion);
  });
});
