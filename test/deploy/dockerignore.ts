/** .dockerignore as the image tests read it: the repository's patterns, and whether a pattern list excludes a path. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './manifest-helpers';

/** Pure: does a .dockerignore pattern list exclude `rel`? (The subset of the syntax this repo uses.) */
export function dockerIgnored(patterns: string[], rel: string): boolean {
  let ignored = false;
  for (const p of patterns) {
    const negate = p.startsWith('!');
    const pat = negate ? p.slice(1) : p;
    const re = new RegExp(
      `^${pat
        .replace(/[.+^${}()|[\]]/g, '\\$&')
        .replace(/\*\*\//g, '(?:.*/)?')
        .replace(/\*/g, '[^/]*')}(?:/.*)?$`,
    );
    if (re.test(rel)) ignored = !negate;
  }
  return ignored;
}

export const ignorePatterns = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
