/**
 * Tests that run the built programs fail loudly without the build (never a silent skip that turns green): the
 * error names the missing files and what to run.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Absolute paths of `files` (relative to the repo root); throws naming the missing ones. */
export function requireBuilt(...files: string[]): string[] {
  const abs = files.map((f) => path.resolve(REPO_ROOT, f));
  const missing = abs.filter((f) => !existsSync(f)).map((f) => path.relative(REPO_ROOT, f));
  if (missing.length > 0) throw new Error(`not built (missing ${missing.join(', ')}): run npm run build`);
  return abs;
}
