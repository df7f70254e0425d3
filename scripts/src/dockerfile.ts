/**
 * What the Dockerfiles say, for the tools that run the programs outside an image (the local pod, the benchmarks)
 * and for the image tests: the runtime flags an image's ENTRYPOINT gives node are declared there once.
 */
import { readFileSync } from 'node:fs';
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
 * Pure: the node flags of an ENTRYPOINT `[node, ...flags, script, ...args]`: what comes between the binary and the
 * first argument that is not a flag.
 */
export function nodeFlagsOf(entrypoint: readonly string[]): string[] {
  const flags: string[] = [];
  for (const a of entrypoint.slice(1)) {
    if (!a.startsWith('-')) break;
    flags.push(a);
  }
  return flags;
}

/** The node flags the batcher's or the sidecar's image runs with (for local runs and benchmarks). */
export function imageNodeFlags(root: string, dockerfile: string): string[] {
  const file = path.join(root, dockerfile);
  return nodeFlagsOf(entrypointOf(readFileSync(file, 'utf8'), dockerfile));
}
