/**
 * No import circle in the batcher's sources, `import type` included: each module depends only on what is below it
 * (rules on nothing of the batcher's I/O, the state record on rules and the intents store, the phases on the state,
 * the loop on the phases), so a module can be read, tested and changed without the ones above it. madge builds the
 * graph (type imports count by default).
 */
import path from 'node:path';
import madge from 'madge';

const ROOT = path.join(__dirname, '..', '..');

it('batcher/src has no import circle, type-only imports included', async () => {
  const graph = await madge(path.join(ROOT, 'batcher', 'src'), {
    fileExtensions: ['ts'],
    tsConfig: path.join(ROOT, 'batcher', 'tsconfig.json'),
  });
  // the graph is real: the loop reaches the send phase through the phase list, and a type-only import is an edge
  const deps = graph.obj();
  expect(deps['phases/index.ts']).toContain('phases/send/index.ts');
  expect(deps['context.ts']).toContain('state.ts');
  expect(graph.circular()).toEqual([]);
});
