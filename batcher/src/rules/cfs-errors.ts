/** The original's operator-facing CFS error lines and what a failed create means, from the kind of failure (pure). */
import { errorMessage, isCfsError, type CfsError } from '@cfs-batcher/shared';
import type { CreateFailureReason } from '../metrics';

export function cfsErrorLine(err: unknown): string {
  if (!isCfsError(err)) return `Unexpected response from CFS: ${errorMessage(err)}`;
  switch (err.kind) {
    case 'unreachable':
    case 'timeout':
      return `Unable to connect to CFS: ${err.message}`;
    case 'invalid-response':
      return err.message.startsWith('Non-JSON')
        ? `Non-JSON response from CFS: ${err.message}`
        : `Unexpected response from CFS: ${err.message}`;
    default:
      return `Unexpected response from CFS: ${err.message}`;
  }
}

/**
 * Pure: the reason label of a failed create. Each client error points the on-call engineer somewhere else: 400 at the
 * configuration or the request body, 401/403 at the token (or the tenant), 404 at CFS_API_URL, 409 at a name clash.
 */
export function createFailureReason(err: CfsError): CreateFailureReason {
  if (err.kind === 'timeout') return 'timeout';
  if (err.kind === 'unreachable') return 'unreachable';
  if (err.kind === 'invalid-response') return 'invalid';
  const status = err.status;
  if (status === undefined || status >= 500) return 'http_5xx';
  if (status === 400) return 'http_400';
  if (status === 401 || status === 403) return 'http_auth';
  if (status === 404) return 'http_404';
  if (status === 409) return 'http_409';
  return 'http_4xx';
}

/** Did this failed POST certainly not create the session? (4xx answers, or a request that never left.) */
export function certainlyNotCreated(err: CfsError): boolean {
  if (err.kind === 'http')
    return err.status !== undefined && err.status >= 400 && err.status < 500 && err.status !== 409;
  return err.notSent;
}
