/**
 * Typed CFS v3 client. Every answer is validated; every failure is a CfsError.
 * Lists follow the server's `next` exactly (its full parameter set, after_id moved on).
 */
import { CFS_CLIENT_DEFAULTS } from '../contract';
import { safeParseAnswer } from './derived-check';
import { CfsError } from './errors';
import type { z } from 'zod';
import {
  cfsSchemas,
  describeIssues,
  partitionRecords,
  type CfsComponent,
  type CfsConfiguration,
  type CfsSession,
  type InvalidRecord,
} from './schemas';
import {
  chunkIds,
  componentListQuery,
  nextToParams,
  sessionListQuery,
  type ComponentFilter,
  type ComponentPage,
  type ComponentPatch,
  type SessionCreate,
  type SessionFilter,
  type SessionPage,
} from './requests';
import { Transport, type CallSpec } from './transport';
import type { CfsClientOptions } from './client-options';

/** A list that pages more than this is not converging (a server bug); stop rather than loop forever. */
const MAX_PAGES = 100_000;

/**
 * The path templates under the base URL. A call's `route` (metrics label, log field, error) is the base URL's own
 * path plus its template, i.e. what was really requested: `/v3/sessions` with the default base,
 * `/apis/cfs/v3/sessions` through the API gateway, `/apis/cfs/sessions` for a base that lacks `/v3`.
 */
const TEMPLATES = Object.freeze({
  components: '/components',
  component: '/components/{component_id}',
  sessions: '/sessions',
  session: '/sessions/{session_name}',
  options: '/options',
  configuration: '/configurations/{configuration_id}',
});
type Template = keyof typeof TEMPLATES;

/** The path of a template below the base URL, its one placeholder (if any) filled with the encoded id. */
function pathOf(template: Template, id?: string): string {
  return TEMPLATES[template].replace(/\{[a-z_]+\}/, () => encodeURIComponent(id ?? ''));
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  pageSize?: number;
}

/** One list walked by `pages`: the endpoint names its path, its route and the envelope's array key alike. */
interface PagedList<T> {
  readonly endpoint: 'components' | 'sessions';
  /** The first page's query; later pages use the server's `next`. */
  readonly params: Record<string, string>;
  readonly envelope: z.ZodType<Record<string, unknown>>;
  readonly record: z.ZodType<T>;
  /** The record field that names it in an InvalidRecord. */
  readonly idKey: string;
  readonly signal?: AbortSignal;
}

export class CfsClient {
  private readonly transport: Transport;
  readonly baseUrl: string;
  /** The base URL's path, without a trailing slash ('' for a base at the server's root). */
  private readonly basePath: string;

  constructor(opts: CfsClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.basePath = new URL(this.baseUrl).pathname.replace(/\/+$/, '');
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      connectTimeoutMs: opts.connectTimeoutMs ?? CFS_CLIENT_DEFAULTS.connectTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs ?? CFS_CLIENT_DEFAULTS.requestTimeoutMs,
      retryBudgetMs: opts.retryBudgetMs ?? CFS_CLIENT_DEFAULTS.retryBudgetMs,
      caCertPath: opts.caCertPath,
      tokenFile: opts.tokenFile,
      maxResponseBytes: opts.maxResponseBytes ?? CFS_CLIENT_DEFAULTS.maxResponseBytes,
      onRequest: opts.onRequest,
      onCallState: opts.onCallState,
      logFailures: opts.logFailures,
    });
  }

  /** The route label of a template: the path requested, parameters left as placeholders. */
  route(template: Template): string {
    return `${this.basePath}${TEMPLATES[template]}`;
  }

  private invalid(route: string, method: string, path: string, problem: string, body: unknown): CfsError {
    return new CfsError(
      'invalid-response',
      `Unexpected response from CFS for ${method} ${this.baseUrl}${path}: ${problem}`,
      method,
      `${this.baseUrl}${path}`,
      route,
      200,
      body,
    );
  }

  private parse<T>(schema: z.ZodType<T>, body: unknown, route: string, method: string, path: string): T {
    const parsed = safeParseAnswer(schema, body);
    if (!parsed.success) throw this.invalid(route, method, path, describeIssues(parsed.error), body);
    return parsed.data;
  }

  /** One call that answers one record: sent, then validated against its schema (a CfsError otherwise). */
  private async answer<T>(
    schema: z.ZodType<T>,
    method: CallSpec['method'],
    template: Template,
    c: { id?: string; params?: Record<string, string>; body?: unknown; signal?: AbortSignal | undefined },
  ): Promise<T> {
    const path = pathOf(template, c.id);
    const route = this.route(template);
    const body = await this.transport.call({ method, path, route, params: c.params, body: c.body, signal: c.signal });
    return this.parse(schema, body, route, method, path);
  }

  /** Pages through one list endpoint, following `next` exactly; validates the envelope and each record. */
  private async *pages<T>(list: PagedList<T>): AsyncGenerator<{ valid: T[]; invalid: InvalidRecord[] }> {
    const path = TEMPLATES[list.endpoint];
    const route = this.route(list.endpoint);
    let params: Record<string, string> | undefined = list.params;
    const seenAfter = new Set<string>();
    for (let page = 0; params; page++) {
      if (page >= MAX_PAGES)
        throw this.invalid(route, 'GET', path, `paging did not end after ${MAX_PAGES} pages`, null);
      const body = await this.transport.call({ method: 'GET', path, route, params, signal: list.signal });
      const data = this.parse(list.envelope, body, route, 'GET', path);
      yield partitionRecords(data[list.endpoint] as unknown[], list.record, list.idKey);
      const next = data.next as Record<string, unknown> | null | undefined;
      if (!next) return;
      const after = typeof next.after_id === 'string' ? next.after_id : undefined;
      if (after === undefined || seenAfter.has(after)) {
        throw this.invalid(
          route,
          'GET',
          path,
          `paging does not advance (next.after_id=${JSON.stringify(next.after_id)})`,
          next,
        );
      }
      seenAfter.add(after);
      params = nextToParams(next);
    }
  }

  async *listComponents(filter: ComponentFilter, o: ListOptions = {}): AsyncGenerator<ComponentPage> {
    const base = componentListQuery(filter, o.pageSize);
    const idChunks = filter.ids === undefined ? [undefined] : chunkIds(filter.ids);
    for (const ids of idChunks) {
      const params = ids === undefined ? base : { ...base, ids };
      for await (const p of this.pages({
        endpoint: 'components',
        params,
        envelope: cfsSchemas.componentPage,
        record: cfsSchemas.component,
        idKey: 'id',
        signal: o.signal,
      })) {
        yield { components: p.valid, invalid: p.invalid };
      }
    }
  }

  async listAllComponents(filter: ComponentFilter, o: ListOptions = {}): Promise<ComponentPage> {
    const out: ComponentPage = { components: [], invalid: [] };
    for await (const page of this.listComponents(filter, o)) {
      out.components.push(...page.components);
      out.invalid.push(...page.invalid);
    }
    return out;
  }

  async getComponent(
    id: string,
    q: { config_details?: boolean; state_details?: boolean } = {},
    o: CallOptions = {},
  ): Promise<CfsComponent> {
    const params: Record<string, string> = {};
    if (q.config_details !== undefined) params.config_details = String(q.config_details);
    if (q.state_details !== undefined) params.state_details = String(q.state_details);
    return this.answer(cfsSchemas.component, 'GET', 'component', { id, params, signal: o.signal });
  }

  async patchComponent(id: string, patch: ComponentPatch, o: CallOptions = {}): Promise<CfsComponent> {
    return this.answer(cfsSchemas.component, 'PATCH', 'component', { id, body: patch, signal: o.signal });
  }

  async *listSessions(filter: SessionFilter, o: ListOptions = {}): AsyncGenerator<SessionPage> {
    const params = sessionListQuery(filter, o.pageSize);
    for await (const p of this.pages({
      endpoint: 'sessions',
      params,
      envelope: cfsSchemas.sessionPage,
      record: cfsSchemas.session,
      idKey: 'name',
      signal: o.signal,
    })) {
      yield { sessions: p.valid, invalid: p.invalid };
      if (filter.limit !== undefined) return; // an explicit limit asks for one page only
    }
  }

  async listAllSessions(filter: SessionFilter, o: ListOptions = {}): Promise<SessionPage> {
    const out: SessionPage = { sessions: [], invalid: [] };
    for await (const page of this.listSessions(filter, o)) {
      out.sessions.push(...page.sessions);
      out.invalid.push(...page.invalid);
    }
    return out;
  }

  async getSession(name: string, o: CallOptions = {}): Promise<CfsSession> {
    return this.answer(cfsSchemas.session, 'GET', 'session', { id: name, signal: o.signal });
  }

  async createSession(create: SessionCreate, o: CallOptions = {}): Promise<CfsSession> {
    return this.answer(cfsSchemas.session, 'POST', 'sessions', { body: create, signal: o.signal });
  }

  async deleteSession(name: string, o: CallOptions = {}): Promise<void> {
    const path = pathOf('session', name);
    await this.transport.call({ method: 'DELETE', path, route: this.route('session'), signal: o.signal });
  }

  async getOptions(o: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.answer(cfsSchemas.options, 'GET', 'options', { signal: o.signal });
  }

  async patchOptions(patch: Record<string, unknown>, o: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.answer(cfsSchemas.options, 'PATCH', 'options', { body: patch, signal: o.signal });
  }

  async getConfiguration(name: string, o: CallOptions = {}): Promise<CfsConfiguration> {
    return this.answer(cfsSchemas.configuration, 'GET', 'configuration', { id: name, signal: o.signal });
  }
}
