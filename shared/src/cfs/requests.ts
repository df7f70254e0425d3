/**
 * The shapes of what the client sends and gets back in lists (filters, patches, session creates, pages) and the pure
 * query helpers: a list's first query from its filter, ids cut into chunks a request line can carry, tags as CFS's
 * `k=v,k=v`, a server's `next` as the following page's query.
 */
import type { CfsComponent, CfsSession, InvalidRecord } from './schemas';

/** Keep a query string well below uwsgi's 16 KiB request buffer (CFS's API server runs under uwsgi). */
export const MAX_IDS_QUERY_CHARS = 4000;
export type ComponentStatus = 'unconfigured' | 'failed' | 'pending' | 'configured';

export interface ComponentFilter {
  ids?: string[];
  status?: ComponentStatus;
  enabled?: boolean;
  config_name?: string;
  tags?: Record<string, string>;
  config_details?: boolean;
  state_details?: boolean;
}

export interface SessionFilter {
  name_contains?: string;
  status?: 'pending' | 'running' | 'complete';
  succeeded?: 'none' | 'true' | 'false' | 'unknown';
  min_age?: string;
  max_age?: string;
  tags?: Record<string, string>;
  limit?: number;
}

export interface StateAppend {
  clone_url: string;
  playbook: string;
  commit: string;
  status: 'applied' | 'failed' | 'skipped';
  session_name: string;
}

export interface ComponentPatch {
  state_append?: StateAppend;
  error_count?: number;
  enabled?: boolean;
  desired_config?: string;
  state?: unknown[];
  tags?: Record<string, string>;
  retry_policy?: number;
}

export interface SessionCreate {
  name: string;
  configuration_name: string;
  configuration_limit?: string;
  ansible_limit?: string;
  target?: { definition: 'dynamic' };
  tags?: Record<string, string>;
}

export interface ComponentPage {
  components: CfsComponent[];
  invalid: InvalidRecord[];
}
export interface SessionPage {
  sessions: CfsSession[];
  invalid: InvalidRecord[];
}

export const tagsParam = (tags: Record<string, string>): string =>
  Object.entries(tags)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** Splits ids into csv chunks that each stay under `maxChars`. Pure. */
export function chunkIds(ids: readonly string[], maxChars = MAX_IDS_QUERY_CHARS): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const id of ids) {
    const encodedLen = encodeURIComponent(id).length + 3; // "%2C" between ids
    if (current !== '' && current.length + encodedLen > maxChars) {
      chunks.push(current);
      current = '';
    }
    current = current === '' ? id : `${current},${id}`;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

/** Turns a server `next` object back into query parameters, as the real clients do (nulls dropped). */
export function nextToParams(next: Record<string, unknown>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(next)) {
    if (v === null || v === undefined) continue;
    params[k] =
      typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  }
  return params;
}

/** The first page's query of a component list (without `ids`: they go in chunks, chunkIds). */
export function componentListQuery(filter: ComponentFilter, pageSize: number | undefined): Record<string, string> {
  const q: Record<string, string> = {};
  if (filter.status !== undefined) q.status = filter.status;
  if (filter.enabled !== undefined) q.enabled = String(filter.enabled);
  if (filter.config_name !== undefined) q.config_name = filter.config_name;
  if (filter.tags && Object.keys(filter.tags).length > 0) q.tags = tagsParam(filter.tags);
  if (filter.config_details !== undefined) q.config_details = String(filter.config_details);
  if (filter.state_details !== undefined) q.state_details = String(filter.state_details);
  if (pageSize !== undefined) q.limit = String(pageSize);
  return q;
}

/** The first page's query of a session list; the filter's own `limit` (one page only) wins over the page size. */
export function sessionListQuery(filter: SessionFilter, pageSize: number | undefined): Record<string, string> {
  const q: Record<string, string> = {};
  for (const key of ['name_contains', 'status', 'succeeded', 'min_age', 'max_age'] as const) {
    const v = filter[key];
    if (v !== undefined) q[key] = v;
  }
  if (filter.tags && Object.keys(filter.tags).length > 0) q.tags = tagsParam(filter.tags);
  const limit = filter.limit ?? pageSize;
  if (limit !== undefined) q.limit = String(limit);
  return q;
}
