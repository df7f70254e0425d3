import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A private temp directory for one test file, made when `dir` is first read (so a skipped block that never runs
 * leaves none behind); `cleanup` removes it.
 */
export function makeTempDir(prefix: string): { readonly dir: string; cleanup: () => void } {
  let made: string | undefined;
  return {
    get dir() {
      made ??= mkdtempSync(path.join(os.tmpdir(), `cfsb-${prefix}-`));
      return made;
    },
    cleanup: () => {
      if (made === undefined) return;
      try {
        rmSync(made, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    },
  };
}
