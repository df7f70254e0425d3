/** The original's operator-facing CFS error lines, chosen from the kind of failure (pure mapping + one log call). */
import { errorMessage, isCfsError, type CfsError, type Logger } from '@cfs-batcher/shared';
import type { CreateFailureReason } from './metrics';

export function cfsErrorLine(err: unknown): string {
  if (!isCfsError(err)) return `Unexpected response from CFS: ${errorMessage(err)}`;
  switch (err.kind) {
    case 'unreachable':
    case 'timeout':
      return `Unable to connect to CFS: ${err.message}`;
    case 'invalid-response':
      return err.message.startsWith('Non-JSON') ? `Non-JSON response from CFS: ${err.message}` : `Unexpected response from CFS: ${err.message}`;
    default:
      return `Unexpected response from CFS: ${err.message}`;
  }
}

export function logCfsError(log: Logger, err: unknown): void {
  if (isCfsError(err) && err.kind === 'aborted') return;
  log.error(cfsErrorLine(err), isCfsError(err) ? { kind: err.kind, status: err.status, route: err.route, method: err.method } : {});
}

export function createFailureReason(err: CfsError): CreateFailureReason {
  if (err.kind === 'timeout') return 'timeout';
  if (err.kind === 'unreachable') return 'unreachable';
  if (err.kind === 'invalid-response') return 'invalid';
  if (err.status === 409) return 'http_409';
  if (err.status !== undefined && err.status >= 500) return 'http_5xx';
  return 'http_400';
}

/** Did this failed POST certainly not create the session? (4xx answers, or a request that never left.) */
export function certainlyNotCreated(err: CfsError): boolean {
  if (err.kind === 'http') return err.status !== undefined && err.status >= 400 && err.status < 500 && err.status !== 409;
  return err.notSent;
}

/** Errors that mean CFS itself is unavailable, so the cycle should stop and wait. */
export function isCfsOutage(err: CfsError): boolean {
  if (err.kind === 'unreachable' || err.kind === 'timeout') return true;
  return err.kind === 'http' && err.status !== undefined && err.status >= 500;
}
