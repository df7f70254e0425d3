/**
 * The CFS bearer token, read from a file that Kubernetes rotates in place: re-read when its mtime changes, the last
 * token kept (and the problem logged once per change, not per request) while the file cannot be read.
 */
import { readFileSync, statSync } from 'node:fs';
import { getLogger } from '../logger';

const log = getLogger('cfs.transport');

export class TokenFile {
  private cache?: { mtimeMs: number; token: string };
  /** The file's last read failed with this problem. */
  private problem?: string;

  constructor(private readonly file: string) {}

  /** The current token, the last one read if the file cannot be read now, or undefined if none was ever read. */
  token(): string | undefined {
    const file = this.file;
    try {
      const { mtimeMs } = statSync(file);
      if (!this.cache || this.cache.mtimeMs !== mtimeMs) {
        this.cache = { mtimeMs, token: readFileSync(file, 'utf8').trim() };
      }
      if (this.problem !== undefined) log.info(`CFS token file ${file} is readable again`);
      this.problem = undefined;
      return this.cache.token;
    } catch (err) {
      const problem = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      if (problem !== this.problem) {
        const using = this.cache ? 'the last token read' : 'no token';
        log.error(`Cannot read the CFS token file ${file} (${problem}); requests go with ${using}`);
      }
      this.problem = problem;
      return this.cache?.token;
    }
  }
}
