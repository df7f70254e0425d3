/** writeFileAtomic: the heartbeat's and the create-intents file's one way to replace a file. */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { atomicTempPath, writeFileAtomic } from '@cfs-batcher/shared';
import { makeTempDir } from '../helpers/tmp';

const tmp = makeTempDir('atomic-file');
afterAll(() => tmp.cleanup());

let n = 0;
/** A fresh directory per test. */
function freshDir(): string {
  const dir = path.join(tmp.dir, `t${(n += 1)}`);
  mkdirSync(dir);
  return dir;
}

it('creates, then replaces, a file, and leaves no temp file behind', async () => {
  const dir = freshDir();
  const file = path.join(dir, 'state.json');
  await writeFileAtomic(file, '{"a":1}');
  expect(readFileSync(file, 'utf8')).toBe('{"a":1}');
  await writeFileAtomic(file, '{"a":2}');
  expect(readFileSync(file, 'utf8')).toBe('{"a":2}');
  expect(readdirSync(dir)).toEqual(['state.json']);
});

it('the temp file is hidden, beside the target, and names the process', () => {
  expect(atomicTempPath('/v/hb.json')).toBe(`/v/.hb.json.${process.pid}.tmp`);
});

it('a rename that fails throws, keeps the old target and removes the temp file', async () => {
  const dir = freshDir();
  const target = path.join(dir, 'taken');
  mkdirSync(target);
  writeFileSync(path.join(target, 'inside'), 'old');
  await expect(writeFileAtomic(target, 'new')).rejects.toThrow();
  expect(readFileSync(path.join(target, 'inside'), 'utf8')).toBe('old');
  expect(existsSync(atomicTempPath(target))).toBe(false);
});

it('a missing directory throws and creates nothing', async () => {
  const dir = freshDir();
  const file = path.join(dir, 'absent', 'x.json');
  await expect(writeFileAtomic(file, 'x')).rejects.toMatchObject({ code: 'ENOENT' });
  expect(readdirSync(dir)).toEqual([]);
});

it('a reader never sees part of a file while it is replaced', async () => {
  const dir = freshDir();
  const file = path.join(dir, 'big.json');
  const versions = ['a', 'b', 'c'].map((c) => JSON.stringify({ fill: c.repeat(256 * 1024) }));
  await writeFileAtomic(file, versions[0]!);
  let reading = true;
  const seen = new Set<string>();
  const reader = (async () => {
    while (reading) {
      const text = readFileSync(file, 'utf8');
      expect(versions).toContain(text);
      seen.add(text);
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 1; i <= 30; i++) await writeFileAtomic(file, versions[i % versions.length]!);
  reading = false;
  await reader;
  expect(seen.size).toBeGreaterThan(0);
});
