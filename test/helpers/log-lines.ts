/** A container's log file as lines, each parsed where it is JSON (the batcher's winston lines). */
import { readFileSync } from 'node:fs';

export interface LogLine {
  text: string;
  json?: Record<string, unknown>;
}

/** Every non-empty line of `file`; none while the file does not exist yet. */
export function readLogLines(file: string): LogLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return { text: l, json: l.startsWith('{') ? (JSON.parse(l) as Record<string, unknown>) : undefined };
      } catch {
        return { text: l };
      }
    });
}
