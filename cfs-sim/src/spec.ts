/**
 * Optional runtime validation against the real CFS OpenAPI spec (express-openapi-validator, dereference mode).
 * The spec lives outside the repo; it is patched in memory where the real server and the spec disagree.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const SPEC_RELATIVE = path.join('shared', 'reference', 'cfs-openapi.yaml');

/** CFS_OPENAPI_SPEC, else the first `<ancestor>/shared/reference/cfs-openapi.yaml` walking up from here. */
export function findSpec(env: NodeJS.ProcessEnv = process.env, start: string = __dirname): string | undefined {
  if (env.CFS_OPENAPI_SPEC) return existsSync(env.CFS_OPENAPI_SPEC) ? env.CFS_OPENAPI_SPEC : undefined;
  let dir = path.resolve(start);
  for (let i = 0; i < 20; i++) {
    const candidate = path.join(dir, SPEC_RELATIVE);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Loads the spec and applies the documented real-API/spec discrepancies (see cfs-sim/README.md). */
export function loadPatchedSpec(specPath: string): Json {
  const doc = parse(readFileSync(specPath, 'utf8')) as Json;
  // The validator applies the servers base path (/apis/cfs); the simulator serves at the root.
  doc.servers = [{ url: '/' }];
  const schemas = doc.components.schemas as Json;
  // Real server: desired_state items are the configuration's layers copied in full plus a computed status in
  // unconfigured|failed|pending|configured (notes 1.4), not V3ConfigurationStateLayer as the spec says.
  const layerProps = schemas.V3ConfigurationLayer.properties as Json;
  schemas.V3ComponentData.properties.desired_state.items = {
    type: 'object',
    properties: {
      ...layerProps,
      status: { type: 'string', enum: ['unconfigured', 'failed', 'pending', 'configured'] },
    },
    additionalProperties: false,
  };
  // Real server: the `_incomplete` commit suffix is stored as status 'incomplete' (notes 1.6 / 2.3).
  schemas.V3ConfigurationStateLayer.properties.status.enum = ['applied', 'failed', 'skipped', 'incomplete'];
  // Real server: session times are datetime.now().isoformat(timespec='seconds') -- local time with no zone,
  // which is not an RFC 3339 date-time.
  for (const key of ['start_time', 'completion_time'])
    delete schemas.V3SessionStatusSessionSection.properties[key].format;
  // Real server (connexion) accepts empty query values (`ids=&status=&tags=`, as found in `next`); the validator
  // refuses them unless the parameter says allowEmptyValue. Likewise it refuses unencoded reserved characters
  // (`ids=a,b` with its commas as they are, as the batcher's client sends them) unless allowReserved.
  for (const item of Object.values(doc.paths as Json)) {
    for (const op of Object.values(item as Json)) {
      for (const p of ((op as Json)?.parameters ?? []) as Json[])
        if (p.in === 'query') {
          p.allowEmptyValue = true;
          p.allowReserved = true;
        }
    }
  }
  return doc;
}
