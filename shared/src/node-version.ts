/**
 * The Node.js every program needs, checked before anything else loads: on an older Node a program would fail deep in
 * a dependency (axios under `--lite-mode` on Node 20: `WebAssembly is not defined`) and a pod would only show a
 * missing heartbeat. Imports nothing, so it runs on any Node; `node-check.ts` is the entries' side-effect import.
 */

/** The oldest Node.js the programs run on: the `engines` range of the root package.json (a test keeps them equal). */
export const NODE_VERSION_NEEDED = '24.11.0';

function parts(v: string): number[] {
  return v
    .replace(/^v/, '')
    .split('.')
    .map((x) => Number.parseInt(x, 10) || 0);
}

/** Pure: the refusal line for `found` (e.g. process.versions.node), or null when it is new enough. */
export function nodeVersionProblem(found: string, needed: string = NODE_VERSION_NEEDED): string | null {
  const [a, b] = [parts(found), parts(needed)];
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d > 0) return null;
    if (d < 0) return `Unsupported Node.js ${found}: this program needs Node.js ${needed} or newer`;
  }
  return null;
}

/**
 * Refuses an unsupported Node with one JSON ERROR line (the programs' log format) and exit code 2, the start-up
 * configuration error code of docs/CONTRACTS.md. Written to stdout as every other line, synchronously.
 */
export function refuseUnsupportedNode(program: string, found: string = process.versions.node): void {
  const problem = nodeVersionProblem(found);
  if (problem === null) return;
  const line = {
    level: 'ERROR',
    logger: program,
    message: problem,
    pid: process.pid,
    timestamp: new Date().toISOString(),
  };
  // Synchronous on Linux for a file, a pipe and a terminal: the line is out before the exit.
  process.stdout.write(`${JSON.stringify(line)}\n`);
  // eslint-disable-next-line no-restricted-properties -- nothing else may load on this Node, winston included
  process.exit(2);
}
