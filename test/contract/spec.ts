/**
 * The project's CFS v3 contract document (cfs-sim/contract/cfs-v3.yaml), dereferenced, and an Ajv-based validator
 * for requests and responses. test/contract/drift.test.ts checks that document against the published CFS spec
 * where that is at hand (publishedSpecPath).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { CONTRACT_SPEC } from '@cfs-batcher/cfs-sim';

export { CONTRACT_SPEC };

/**
 * The published CFS OpenAPI document, optional and never part of this repository: CFS_OPENAPI_SPEC, else
 * ../shared/reference/cfs-openapi.yaml from the repository's root (where a checkout may keep shared files beside
 * its clone). Undefined when absent.
 */
export function publishedSpecPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const repoRoot = path.resolve(__dirname, '..', '..');
  const candidates = [env.CFS_OPENAPI_SPEC, path.resolve(repoRoot, '..', 'shared', 'reference', 'cfs-openapi.yaml')];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

export interface SpecValidator {
  /** Problems with a request as a client sent it; empty when it conforms. */
  checkRequest(method: string, url: string, body: unknown): string[];
  /** Problems with a JSON response body for an operation and status; empty when it conforms. */
  checkResponse(method: string, url: string, status: number, body: unknown): string[];
  operationId(method: string, url: string): string | undefined;
}

/** Removes readOnly properties from a request schema and writeOnly ones from a response schema, as OpenAPI says. */
function directional(schema: unknown, drop: 'readOnly' | 'writeOnly', seen = new Map<unknown, unknown>()): unknown {
  if (!schema || typeof schema !== 'object') return schema;
  if (seen.has(schema)) return seen.get(schema);
  if (Array.isArray(schema)) return schema.map((s) => directional(s, drop, seen));
  const out: Record<string, unknown> = {};
  seen.set(schema, out);
  for (const [k, v] of Object.entries(schema as Schema)) {
    if (k === 'properties' && v && typeof v === 'object') {
      const props: Record<string, unknown> = {};
      for (const [pk, pv] of Object.entries(v as Schema)) {
        if (pv && typeof pv === 'object' && (pv as Schema)[drop] === true) continue;
        props[pk] = directional(pv, drop, seen);
      }
      out[k] = props;
    } else if (k === 'required' && Array.isArray(v)) {
      const props = (schema as Schema).properties as Schema | undefined;
      out[k] = v.filter((r: string) => !(props && (props[r] as Schema | undefined)?.[drop] === true));
    } else if (k === 'nullable' && v === true) {
      out[k] = v;
    } else {
      out[k] = directional(v, drop, seen);
    }
  }
  return out;
}

export async function loadSpecValidator(specPath: string = CONTRACT_SPEC): Promise<SpecValidator> {
  const api = (await SwaggerParser.dereference(specPath)) as unknown as {
    paths: Record<string, Record<string, Operation>>;
  };
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: false });
  addFormats(ajv);
  const cache = new Map<string, ValidateFunction>();
  const compile = (key: string, schema: unknown): ValidateFunction => {
    let fn = cache.get(key);
    if (!fn) {
      fn = ajv.compile(schema as object);
      cache.set(key, fn);
    }
    return fn;
  };
  const routes = Object.entries(api.paths).map(([template, ops]) => ({
    template,
    regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    ops,
  }));
  const find = (method: string, url: string): { template: string; op: Operation } | undefined => {
    const pathname = new URL(url, 'http://x').pathname;
    const route = routes.find((r) => r.regex.test(pathname));
    const op = route?.ops[method.toLowerCase()];
    return route && op ? { template: route.template, op } : undefined;
  };
  const errorsOf = (fn: ValidateFunction, where: string): string[] =>
    (fn.errors ?? []).map((e) => `${where}${e.instancePath || ''} ${e.message ?? ''}`.trim());

  return {
    operationId: (method, url) => find(method, url)?.op.operationId,
    checkRequest(method, url, body) {
      const found = find(method, url);
      if (!found) return [`no operation ${method} ${new URL(url, 'http://x').pathname} in the spec`];
      const problems: string[] = [];
      const params = (found.op.parameters ?? []).filter((p) => p.in === 'query');
      for (const [name, raw] of new URL(url, 'http://x').searchParams) {
        const p = params.find((q) => q.name === name);
        if (!p) {
          problems.push(`query parameter ${name} is not declared for ${found.op.operationId}`);
          continue;
        }
        const type = p.schema?.type;
        let value: unknown = raw;
        if (type === 'integer' || type === 'number') value = raw === '' ? NaN : Number(raw);
        if (type === 'boolean') value = /^(true|false)$/i.test(raw) ? raw.toLowerCase() === 'true' : raw;
        const fn = compile(`${found.op.operationId}:q:${name}`, p.schema ?? {});
        if (!fn(value)) problems.push(...errorsOf(fn, `query ${name}=${raw}:`));
      }
      const schema = found.op.requestBody?.content?.['application/json']?.schema;
      if (schema) {
        const fn = compile(`${found.op.operationId}:body`, directional(schema, 'readOnly'));
        if (!fn(body)) problems.push(...errorsOf(fn, 'body'));
      } else if (body !== undefined && body !== '') {
        problems.push(`${found.op.operationId} takes no body`);
      }
      return problems;
    },
    checkResponse(method, url, status, body) {
      const found = find(method, url);
      if (!found) return [`no operation ${method} ${url}`];
      const resp = found.op.responses?.[String(status)] ?? found.op.responses?.default;
      if (!resp) return [`status ${status} is not documented for ${found.op.operationId}`];
      const schema = resp.content?.['application/json']?.schema ?? resp.content?.['application/problem+json']?.schema;
      if (!schema) return body === undefined || body === '' ? [] : [];
      const fn = compile(`${found.op.operationId}:r:${status}`, directional(schema, 'writeOnly'));
      return fn(body) ? [] : errorsOf(fn, `response ${status}`);
    },
  };
}
