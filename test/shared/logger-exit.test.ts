/**
 * The programs' fatal lines ("Configuration error: ...", "Unexpected error occurred: ...") arrive whole, the last
 * one included, whatever stdout is: run-main.ts logs them, then ends with exitAfterLogs. A bare process.exit() would
 * do only for a file, which node writes synchronously; to a pipe, what the reader has not taken yet (the socket holds
 * some 170 short lines) is still queued in node when process.exit() drops it, which a loaded machine shows. One-shot
 * runs of the built shared library.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { requireBuilt } from '../helpers/built';
import { makeTempDir } from '../helpers/tmp';

const [SHARED] = requireBuilt('shared/dist/index.js');

function run(script: string, stdout: 'pipe' | number): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['-e', `const shared = require(${JSON.stringify(SHARED)});\n${script}`], {
    stdio: ['ignore', stdout, 'pipe'],
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr };
}

const parse = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const LAST_WORDS = `
for (let i = 0; i < 200; i++) shared.getLogger('t').info('line ' + i, { i });
shared.getLogger('t').error('last words', { n: 1n });
`;

it('to a pipe: every line up to the last, with exitAfterLogs', () => {
  const r = run(`${LAST_WORDS}shared.exitAfterLogs(3);`, 'pipe');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(3);
  const lines = parse(r.stdout);
  expect(lines).toHaveLength(201);
  expect(lines.at(-1)).toMatchObject({ level: 'ERROR', logger: 't', message: 'last words', n: '1' });
});

// Each line is handed to stdout before the log call returns (nothing waits in winston for the next tick): to a
// file, even a bare process.exit() keeps them all.
it('to a file: every line up to the one before a bare process.exit()', () => {
  const tmp = makeTempDir('logger-exit');
  try {
    const file = path.join(tmp.dir, 'out.log');
    const fd = openSync(file, 'w');
    let r: ReturnType<typeof run>;
    try {
      r = run(`${LAST_WORDS}process.exit(3);`, fd);
    } finally {
      closeSync(fd);
    }
    expect(r.stderr).toBe('');
    expect(r.status).toBe(3);
    const lines = parse(readFileSync(file, 'utf8'));
    expect(lines).toHaveLength(201);
    expect(lines.at(-1)).toMatchObject({ level: 'ERROR', message: 'last words' });
  } finally {
    tmp.cleanup();
  }
});

it("runMain's configuration error: one ERROR line and exit 2", () => {
  const r = run(`shared.runMain(async () => { throw new shared.ConfigError('BAD_VAR must be a number'); });`, 'pipe');
  expect(r.status).toBe(2);
  expect(parse(r.stdout)).toEqual([
    expect.objectContaining({
      level: 'ERROR',
      logger: 'main',
      message: 'Configuration error: BAD_VAR must be a number',
    }),
  ]);
});

it("runMain's unexpected error: the line with its stack, exit 1", () => {
  const r = run(`shared.runMain(async () => { throw new TypeError('boom'); });`, 'pipe');
  expect(r.status).toBe(1);
  const [line] = parse(r.stdout);
  expect(line).toMatchObject({ level: 'ERROR', message: 'Unexpected error occurred: boom' });
  expect(String(line!.stack)).toContain('TypeError: boom');
});

/** Spawns the script with stdout and stderr piped; resolves on exit with what was read. */
function start(script: string) {
  const child = spawn(process.execPath, ['-e', `const shared = require(${JSON.stringify(SHARED)});\n${script}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stderr })),
  );
  return { child, exited, stderrSoFar: () => stderr };
}

it('a log reader that went away (EPIPE) does not kill the program', async () => {
  const { child, exited } = start(`
    let rounds = 0;
    const t = setInterval(() => {
      for (let k = 0; k < 50; k++) shared.getLogger('t').info('x'.repeat(200));
      if (++rounds === 40) { clearInterval(t); process.stderr.write('still alive\\n'); process.exit(0); }
    }, 5);`);
  child.stdout.once('data', () => child.stdout.destroy()); // the reader closes its end after the first chunk
  const r = await exited;
  expect(r.stderr).toContain('still alive');
  expect(r.code).toBe(0);
});

it('exitAfterLogs: a slow reader still gets every line, the last one whole', async () => {
  const { child, exited, stderrSoFar } = start(`
    for (let i = 0; i < 3000; i++) shared.getLogger('t').info('line ' + i, { pad: 'y'.repeat(80) });
    shared.getLogger('t').error('last words');
    process.stderr.write('queued\\n');
    shared.exitAfterLogs(3);`);
  child.stdout.pause(); // nothing read until the child has queued everything (more than a pipe holds)
  await new Promise<void>((resolve) => {
    const check = () => (stderrSoFar().includes('queued') ? resolve() : child.stderr.once('data', check));
    check();
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stdout.resume();
  const r = await exited;
  expect(r.code).toBe(3);
  const lines = parse(out);
  expect(lines).toHaveLength(3001);
  expect(lines.at(-1)).toMatchObject({ level: 'ERROR', message: 'last words' });
});
