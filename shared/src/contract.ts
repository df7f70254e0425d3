/**
 * Names and defaults more than one program relies on, declared once (docs/CONTRACTS.md).
 */
import type { z } from 'zod';

/** Every session the batcher creates is named `batcher-<uuid>`; the sidecar and a restarted batcher find them by it. */
export const BATCHER_SESSION_PREFIX = 'batcher-';

/**
 * The CFS options the batcher uses, with the defaults in force until CFS answers (and written back when CFS lacks
 * one). The sidecar judges with the same values until the first heartbeat reports the live ones.
 */
export const CFS_OPTION_DEFAULTS = Object.freeze({
  batcher_check_interval: 10,
  batch_size: 25,
  batch_window: 60,
  default_batcher_retry_policy: 3,
  batcher_max_backoff: 3600,
  batcher_disable: false,
  batcher_pending_timeout: 300,
  logging_level: 'INFO',
});

/** The CFS client's defaults (the batcher's settings override the URL, request timeout and retry budget). */
export const CFS_CLIENT_DEFAULTS = Object.freeze({
  baseUrl: 'http://cray-cfs-api/v3',
  connectTimeoutMs: 3000,
  requestTimeoutMs: 10_000,
  retryBudgetMs: 30_000,
  maxResponseBytes: 256 * 1024 * 1024,
});

/** Formats the first few zod issues as `path: message; ...`; `root` names an issue on the value itself. */
export function formatZodIssues(error: z.ZodError, opts: { max?: number; root?: string } = {}): string {
  return error.issues
    .slice(0, opts.max ?? 4)
    .map((i) => `${i.path.join('.') || (opts.root ?? '(root)')}: ${i.message}`)
    .join('; ');
}
