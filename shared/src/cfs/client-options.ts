/** How a CFS client is set up: its options, and the settings of the CFS connection each program declares. */
import { CFS_CLIENT_DEFAULTS } from '../contract';
import { httpUrlSetting, readableFileSetting, type Setting } from '../settings';
import type { CallState } from './call-watch';
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
  /** A call that fails and retries, and its end (call-watch.ts). */
  onCallState?: (c: CallState) => void;
  /** Log each call's first failure and its end (default true); off where the caller reports failures itself. */
  logFailures?: boolean;
}

/**
 * The CFS connection every program that talks to CFS declares (spread into its settings schema). The timeouts and
 * the retry budget are the batcher's own settings (batcher/src/config.ts): the sidecar's CFS round has fixed ones.
 */
export const CFS_CONNECTION_SETTINGS = {
  CFS_API_URL: {
    schema: httpUrlSetting(),
    default: CFS_CLIENT_DEFAULTS.baseUrl,
    meaning: 'CFS v3 base URL',
    reason: 'a site that reaches CFS through the API gateway (https://api-gw-service-nmn.local/apis/cfs/v3)',
  },
  CA_CERT: {
    schema: readableFileSetting(),
    default: undefined,
    meaning: 'PEM bundle for https CFS URLs (must be readable at start)',
    reason: "an https CFS URL signed by the site's own CA",
  },
  CFS_TOKEN_FILE: {
    schema: readableFileSetting(),
    default: undefined,
    meaning: 'file holding a bearer token, re-read on change (must be readable at start)',
    reason: 'the API gateway asks for a token; the in-cluster service does not',
  },
} satisfies Record<string, Setting>;
