/**
 * Request and response validation (express-openapi-validator, dereference mode) against the project's own record of
 * the CFS v3 contract, cfs-sim/contract/cfs-v3.yaml, patched in memory where the running server departs from the
 * published document. CFS_OPENAPI_SPEC names another document instead (e.g. the published one, whose schema names
 * the patches also fit).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** The contract document of this package: contract/ beside src/ and dist/. */
export const CONTRACT_SPEC = path.resolve(__dirname, '..', 'contract', 'cfs-v3.yaml');

/** CFS_OPENAPI_SPEC when set (undefined when that file is missing), else the package's own contract document. */
export function findSpec(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CFS_OPENAPI_SPEC) return existsSync(env.CFS_OPENAPI_SPEC) ? env.CFS_OPENAPI_SPEC : undefined;
  return CONTRACT_SPEC;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Loads a CFS v3 document and applies the server's known departures from the published one (cfs-sim/README.md). */
export function loadPatchedSpec(specPath: string): Json {
  const doc = parse(readFileSync(specPath, 'utf8')) as Json;
  // The validator applies the servers base path (/apis/cfs); the simulator serves at the root.
  doc.servers = [{ url: '/' }];
  const schemas = doc.components.schemas as Json;
  // Real server: desired_state items are the configuration's layers copied in full plus a computed status in
  // unconfigured|failed|pending|configured, not V3ConfigurationStateLayer as the published document says.
  const layerProps = schemas.V3ConfigurationLayer.properties as Json;
  schemas.V3ComponentData.properties.desired_state.items = {
    type: 'object',
    properties: {
      ...layerProps,
      status: { type: 'string', enum: ['unconfigured', 'failed', 'pending', 'configured'] },
    },
    additionalProperties: false,
  };
  // Real server: the `_incomplete` commit suffix is stored as status 'incomplete'.
  schemas.V3ConfigurationStateLayer.properties.status.enum = ['applied', 'failed', 'skipped', 'incomplete'];
  // Real server: session times are datetime.now().isoformat(timespec='seconds') -- local time with no zone,
  // which is not an RFC 3339 date-time.
  for (const key of ['start_time', 'completion_time'])
    delete schemas.V3SessionStatusSessionSection.properties[key].format;
  // Real server (connexion) accepts empty query values (`ids=&status=&tags=`, as found in `next`); the validator
  // refuses them unless the parameter says allowEmptyValue. Likewise it refuses unencoded reserved characters
  // (`ids=a,b` with its commas as they are, as the batcher's client sends them) unless allowReserved.
  const declared = Object.values((doc.components.parameters ?? {}) as Json) as Json[];
  const inline = Object.values(doc.paths as Json).flatMap((item: Json) => [
    ...((item.parameters ?? []) as Json[]),
    ...Object.values(item).flatMap((op) => ((op as Json)?.parameters ?? []) as Json[]),
  ]);
  for (const p of [...declared, ...inline])
    if (p.in === 'query') {
      p.allowEmptyValue = true;
      p.allowReserved = true;
    }
  return doc;
}
