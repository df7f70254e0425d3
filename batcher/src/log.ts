/** The batcher's loggers (names from the original, admins grep for them) and its one CFS-error log call. */
import { getLogger, isCfsError, type Logger } from '@cfs-batcher/shared';
import { cfsErrorLine } from './rules/cfs-errors';

export const logMain = getLogger('batcher.__main__');
export const logBatch = getLogger('batcher.batch');
export const logSessions = getLogger('batcher.cfs.sessions');
export const logComponents = getLogger('batcher.cfs.components');
export const logOptions = getLogger('batcher.cfs.options');

/** One ERROR line in the original's words; an aborted call (we are stopping) is not an error. */
export function logCfsError(log: Logger, err: unknown): void {
  if (isCfsError(err) && err.kind === 'aborted') return;
  log.error(
    cfsErrorLine(err),
    isCfsError(err) ? { kind: err.kind, status: err.status, route: err.route, method: err.method } : {},
  );
}
