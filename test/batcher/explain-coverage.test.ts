/**
 * The explain contract and its tests stay in step: every state and reason docs/CONTRACTS.md lists ("Explain") is
 * the code's, and has a test that drives the real batcher into it (a `drive(state, reason, ...)` call in an explain
 * test file; `drive` checks the answer really is in that state with that reason).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EXPLAIN_STATES, HOLD_REASONS, NOT_BATCHED_REASONS } from '@cfs-batcher/batcher';

const ROOT = path.join(__dirname, '..', '..');

/** The first-column names of the Explain section's tables, by the header of their first column. */
function contractTables(): Record<string, string[]> {
  const doc = readFileSync(path.join(ROOT, 'docs', 'CONTRACTS.md'), 'utf8');
  const start = doc.indexOf('## Explain');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const tables: Record<string, string[]> = {};
  let header: string | null = null;
  for (const line of section.split('\n')) {
    const cells = line.startsWith('|') ? line.split('|').map((c) => c.trim()) : null;
    if (cells === null) {
      header = null;
      continue;
    }
    if (header === null) {
      header = cells[1]!;
      tables[header] = [];
      continue;
    }
    const name = /^`([a-z_]+)`$/.exec(cells[1]!);
    if (name) tables[header]!.push(name[1]!);
  }
  return tables;
}

/** `[state, reason | null]` of every drive() call in the explain test files. */
function drivenCases(): [string, string | null][] {
  const dir = __dirname;
  const out: [string, string | null][] = [];
  for (const f of readdirSync(dir).filter((n) => /^explain-.*\.test\.ts$/.test(n))) {
    const src = readFileSync(path.join(dir, f), 'utf8');
    for (const m of src.matchAll(/^drive\(\s*'([a-z_]+)',\s*(?:'([a-z_]+)'|null)/gm)) out.push([m[1]!, m[2] ?? null]);
  }
  return out;
}

const tables = contractTables();

it('CONTRACTS lists exactly the states and reasons of the code', () => {
  expect(tables.state).toEqual([...EXPLAIN_STATES]);
  expect([...tables.reason!].sort()).toEqual([...HOLD_REASONS, ...NOT_BATCHED_REASONS].sort());
});

it.each(tables.state!)('state %s has a test driving the batcher into it', (state) => {
  expect(drivenCases().map(([s]) => s)).toContain(state);
});

it.each(tables.reason!)('reason %s has a test driving the batcher into it', (reason) => {
  expect(drivenCases().map(([, r]) => r)).toContain(reason);
});
