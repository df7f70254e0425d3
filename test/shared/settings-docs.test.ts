/**
 * The Environment table of docs/CONTRACTS.md lists exactly the settings each program declares: the names the
 * programs accept (the rest of their prefixes are refused at start) cannot drift from the documented ones.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BATCHER_SETTINGS } from '@cfs-batcher/batcher';
import { SIDECAR_SETTINGS } from '@cfs-batcher/sidecar-health';

const contracts = readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'CONTRACTS.md'), 'utf8');

/** Rows of the Environment table: the variables of the first column, the "read by" words of the second. */
function environmentRows(): Array<{ names: string[]; readBy: string }> {
  const section = contracts.split(/^## Environment$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [first = '', second = ''] = l.split(' | ');
      const names = [...first.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!);
      return { names, readBy: second };
    });
}

const documented = (program: string): string[] =>
  environmentRows()
    .filter((r) => new RegExp(`\\b${program}\\b`).test(r.readBy))
    .flatMap((r) => r.names)
    .sort();

test('the table has rows (the parser found it)', () => {
  expect(environmentRows().length).toBeGreaterThan(20);
});

test.each([
  ['batcher', BATCHER_SETTINGS.known],
  ['sidecar', SIDECAR_SETTINGS.known],
])('the %s reads exactly the variables documented for it', (program, known) => {
  expect(documented(program)).toEqual([...known].sort());
});
