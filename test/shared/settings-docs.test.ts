/**
 * The Environment table of docs/CONTRACTS.md is checked against the settings schemas: each program's rows name
 * exactly the settings it declares, with the schema's default, so the documented names and defaults cannot drift
 * from the ones the programs accept (the rest of their prefixes, and typos, are refused at start).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BATCHER_SETTINGS } from '@cfs-batcher/batcher';
import { SIDECAR_SETTINGS } from '@cfs-batcher/sidecar-health';
import type { SettingsSchema, SettingsShape } from '@cfs-batcher/shared';

const contracts = readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'CONTRACTS.md'), 'utf8');

interface Row {
  name: string;
  readBy: string;
  defaultText: string;
}

/** Rows of the Environment table: the variable of the first column, the "read by" words, the default. */
function environmentRows(): Row[] {
  const section = contracts.split(/^## Environment$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((l) => /^\| `[A-Z0-9_]+` \|/.test(l))
    .map((l) => {
      const [, first = '', readBy = '', defaultText = ''] = l.split('|').map((c) => c.trim());
      return { name: first.replace(/`/g, ''), readBy, defaultText: defaultText.replace(/`/g, '') };
    });
}

const documented = (program: string): Row[] =>
  environmentRows().filter((r) => new RegExp(`\\b${program}\\b`).test(r.readBy));

/** How the table writes a schema default. */
const shown = (d: string | undefined): string => (d === undefined ? 'unset' : d === '' ? '(empty)' : d);

test('the table has rows (the parser found it)', () => {
  expect(environmentRows().length).toBeGreaterThan(10);
});

test.each<[string, SettingsSchema<SettingsShape>]>([
  ['batcher', BATCHER_SETTINGS],
  ['sidecar', SIDECAR_SETTINGS],
])('the %s reads exactly the variables documented for it, with the documented defaults', (program, schema) => {
  const rows = documented(program);
  expect(rows.map((r) => r.name).sort()).toEqual(Object.keys(schema.settings).sort());
  for (const r of rows)
    expect({ [r.name]: r.defaultText }).toEqual({ [r.name]: shown(schema.settings[r.name]!.default) });
});

/** A new setting needs a site's reason: these ceilings make adding one a visible decision. */
test.each<[string, SettingsSchema<SettingsShape>, number]>([
  ['batcher', BATCHER_SETTINGS, 9],
  ['sidecar', SIDECAR_SETTINGS, 12],
])('the %s keeps its settings few', (_program, schema, most) => {
  expect(Object.keys(schema.settings).length).toBeLessThanOrEqual(most);
});
