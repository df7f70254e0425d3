/** How a CFS client is set up: its options and their reading from the environment, each with its default. */
import { CFS_CLIENT_DEFAULTS } from '../contract';
import { envHttpUrl, envInt, envReadableFile } from '../env';
import type { RequestInfo } from './transport';

export const DEFAULT_CFS_API_URL = CFS_CLIENT_DEFAULTS.baseUrl;
export interface CfsClientOptions {
  baseUrl: string;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  retryBudgetMs?: number;
  caCertPath?: string;
  tokenFile?: string;
  maxResponseBytes?: number;
  onRequest?: (r: RequestInfo) => void;
}

export function cfsClientOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): CfsClientOptions {
  return {
    baseUrl: envHttpUrl(env, 'CFS_API_URL', CFS_CLIENT_DEFAULTS.baseUrl),
    // at most 10 minutes: a timer above 2^31-1 ms fires at once (every call would time out), and a call longer than
    // minutes would hold the loop past any liveness window
    connectTimeoutMs: envInt(env, 'CFS_CONNECT_TIMEOUT_MS', CFS_CLIENT_DEFAULTS.connectTimeoutMs, 1, 600_000),
    requestTimeoutMs: envInt(env, 'CFS_REQUEST_TIMEOUT_MS', CFS_CLIENT_DEFAULTS.requestTimeoutMs, 1, 600_000),
    retryBudgetMs: envInt(env, 'CFS_RETRY_BUDGET_MS', CFS_CLIENT_DEFAULTS.retryBudgetMs, 0, 600_000),
    // read once here so a missing or unreadable file stops the program at start with a line that names it
    caCertPath: envReadableFile(env, 'CA_CERT'),
    tokenFile: envReadableFile(env, 'CFS_TOKEN_FILE'),
  };
}
