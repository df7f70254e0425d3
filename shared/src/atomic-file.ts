/**
 * Replaces a file so that a reader, or the next start after a crash, sees the old content or the new one, never a
 * part: the content goes to a temp file in the same directory (a rename cannot cross file systems), is fsynced, then
 * renamed over the target. Used by the heartbeat and the batcher's create-intents file.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** The temp file of `filePath`: hidden, beside it, one per process (writes to one file must not overlap). */
export function atomicTempPath(filePath: string): string {
  return path.join(path.dirname(filePath), `.${path.basename(filePath)}.${process.pid}.tmp`);
}

/** Writes `content` to `filePath` atomically. On failure it throws, the old file stays, and the temp file is gone. */
export async function writeFileAtomic(filePath: string, content: string): Promise<void> {
  const tmp = atomicTempPath(filePath);
  try {
    const handle = await fs.open(tmp, 'w', 0o644);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, filePath);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}
