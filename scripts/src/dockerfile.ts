/**
 * What the Dockerfiles say, for the image tests and the image check: instructions, the ENTRYPOINT, and the node
 * flags in it (none: the images start plain `node <script>`, test/deploy/runtime-flags.test.ts).
 */
import path from 'node:path';

export interface Instruction {
  op: string;
  args: string;
}

/** Pure: Dockerfile text -> instructions (comments dropped, backslash continuations joined). */
export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let buf = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (buf === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      buf += `${line.slice(0, -1).trimEnd()} `;
      continue;
    }
    buf += line;
    const m = /^(\w+)\s+(.*)$/.exec(buf.trim());
    if (m) out.push({ op: (m[1] as string).toUpperCase(), args: m[2] as string });
    buf = '';
  }
  return out;
}

/** The last exec-form ENTRYPOINT of a Dockerfile's text; an error naming the file when there is none. */
export function entrypointOf(text: string, source: string): string[] {
  const last = parseDockerfile(text)
    .filter((i) => i.op === 'ENTRYPOINT')
    .pop();
  let parsed: unknown;
  try {
    parsed = last ? JSON.parse(last.args) : null;
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((a): a is string => typeof a === 'string'))
    throw new Error(`${source}: no exec-form ENTRYPOINT (a JSON array of strings)`);
  return parsed;
}

/**
 * Pure: the node flags of an ENTRYPOINT `[node, ...flags, entry, ...args]`: everything between the binary and the
 * program's entry script (so a flag with a separate value, `--require x.js`, stays whole). An error when the
 * ENTRYPOINT does not run node or not that entry (a wrapper such as tini would need its own reading).
 */
export function nodeFlagsOf(entrypoint: readonly string[], entry: string, source = 'ENTRYPOINT'): string[] {
  if (path.basename(entrypoint[0] ?? '') !== 'node') throw new Error(`${source}: does not start with node`);
  const at = entrypoint.indexOf(entry, 1);
  if (at < 0) throw new Error(`${source}: does not run ${entry}`);
  return entrypoint.slice(1, at);
}

/** Each program's image: its Dockerfile and the entry script its ENTRYPOINT runs (relative to the image's WORKDIR). */
export const PROGRAM_IMAGES = {
  batcher: { dockerfile: 'Dockerfile.batcher', entry: 'batcher/dist/main.js' },
  sidecar: { dockerfile: 'Dockerfile.sidecar', entry: 'sidecar-health/dist/main.js' },
} as const;
