/**
 * Pure: where the project's CFS contract document departs from the published CFS OpenAPI document. Both are
 * dereferenced first, so the two may organise their $refs differently; what is compared is what a validator sees.
 * Every path, operation, parameter, body and response declared in ours must exist in the published one, and every
 * schema in ours must carry the same constraints there, property by property. Where ours closes an object
 * (additionalProperties: false), a property the published schema adds is reported too: our validator would refuse
 * the real server's answer.
 */
type Node = Record<string, unknown>;
interface Operation {
  operationId?: string;
  parameters?: Node[];
  requestBody?: { content?: Record<string, { schema?: Node }> };
  responses?: Record<string, { content?: Record<string, { schema?: Node }> }>;
}
export interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
/** The keywords that decide what a value may be; words (description, example) and deprecation are not compared. */
const CONSTRAINTS = [
  'type',
  'enum',
  'format',
  'pattern',
  'nullable',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'readOnly',
  'writeOnly',
  'default',
];

const isNode = (v: unknown): v is Node => !!v && typeof v === 'object' && !Array.isArray(v);
const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));

/** Problems with `ours` as a description of `theirs` (both dereferenced schemas), each naming where. */
export function schemaDrift(ours: unknown, theirs: unknown, where: string, seen = new Set<unknown>()): string[] {
  if (!isNode(ours)) return [];
  if (!isNode(theirs)) return [`${where}: not in the published document`];
  if (seen.has(ours)) return [];
  seen.add(ours);
  const problems: string[] = [];
  for (const k of CONSTRAINTS) {
    const a = k === 'enum' ? sorted(ours[k]) : ours[k];
    const b = k === 'enum' ? sorted(theirs[k]) : theirs[k];
    if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`${where}: ${k} is ${show(b)} there, ${show(a)} here`);
  }
  if (JSON.stringify(sorted(ours.required)) !== JSON.stringify(sorted(theirs.required)))
    problems.push(`${where}: required is ${show(theirs.required)} there, ${show(ours.required)} here`);
  const ourProps = isNode(ours.properties) ? ours.properties : {};
  const theirProps = isNode(theirs.properties) ? theirs.properties : {};
  for (const [name, schema] of Object.entries(ourProps)) {
    if (!(name in theirProps)) problems.push(`${where}.${name}: not in the published document`);
    else problems.push(...schemaDrift(schema, theirProps[name], `${where}.${name}`, seen));
  }
  if (ours.additionalProperties === false) {
    for (const name of Object.keys(theirProps))
      if (!(name in ourProps)) problems.push(`${where}.${name}: published, but refused here (additionalProperties)`);
  }
  if (typeof ours.additionalProperties === 'boolean' || typeof theirs.additionalProperties === 'boolean') {
    if (ours.additionalProperties !== theirs.additionalProperties)
      problems.push(
        `${where}: additionalProperties is ${show(theirs.additionalProperties)} there, ${show(ours.additionalProperties)} here`,
      );
  } else if (isNode(ours.additionalProperties)) {
    problems.push(...schemaDrift(ours.additionalProperties, theirs.additionalProperties, `${where}{*}`, seen));
  }
  if ('items' in ours) problems.push(...schemaDrift(ours.items, theirs.items, `${where}[]`, seen));
  for (const k of ['oneOf', 'anyOf', 'allOf']) {
    const a = ours[k];
    const b = theirs[k];
    if (!Array.isArray(a)) continue;
    if (!Array.isArray(b) || a.length !== b.length) {
      problems.push(`${where}: ${k} has ${Array.isArray(b) ? b.length : 0} choices there, ${a.length} here`);
      continue;
    }
    a.forEach((s, i) => problems.push(...schemaDrift(s, b[i], `${where}.${k}[${i}]`, seen)));
  }
  return problems;
}

function sorted(v: unknown): unknown {
  return Array.isArray(v) ? [...(v as unknown[])].map(String).sort() : v;
}

/** Path-level and operation-level parameters by `in:name` (header names are case-insensitive). */
function parametersOf(item: Record<string, unknown>, op: Operation): Map<string, Node> {
  const all = [...((item.parameters as Node[] | undefined) ?? []), ...(op.parameters ?? [])];
  const key = (p: Node) => `${String(p.in)}:${p.in === 'header' ? String(p.name).toLowerCase() : String(p.name)}`;
  return new Map(all.map((p) => [key(p), p]));
}

function contentDrift(
  ours: Record<string, { schema?: Node }> | undefined,
  theirs: Record<string, { schema?: Node }> | undefined,
  where: string,
): string[] {
  return Object.entries(ours ?? {}).flatMap(([type, media]) => {
    const other = theirs?.[type];
    if (!other) return [`${where} ${type}: not in the published document`];
    return schemaDrift(media.schema, other.schema, `${where} ${type}`);
  });
}

/** Every departure of `ours` from `published` (both dereferenced OpenAPI 3 documents). */
export function contractDrift(ours: OpenApi, published: OpenApi): string[] {
  const problems: string[] = [];
  for (const [template, item] of Object.entries(ours.paths)) {
    const theirItem = published.paths[template];
    if (!theirItem) {
      problems.push(`${template}: no such path in the published document`);
      continue;
    }
    for (const method of METHODS.filter((m) => m in item)) {
      const op = item[method] as Operation;
      const theirs = theirItem[method] as Operation | undefined;
      const at = `${method.toUpperCase()} ${template}`;
      if (!theirs) {
        problems.push(`${at}: no such operation in the published document`);
        continue;
      }
      if (op.operationId !== theirs.operationId)
        problems.push(`${at}: operationId is ${show(theirs.operationId)} there, ${show(op.operationId)} here`);
      const theirParams = parametersOf(theirItem, theirs);
      for (const [key, p] of parametersOf(item, op)) {
        const other = theirParams.get(key);
        if (!other) problems.push(`${at} parameter ${key}: not in the published document`);
        else {
          if (!!p.required !== !!other.required)
            problems.push(`${at} parameter ${key}: required is ${show(!!other.required)} there`);
          problems.push(...schemaDrift(p.schema, other.schema, `${at} parameter ${key}`));
        }
      }
      if (op.requestBody) {
        if (!theirs.requestBody) problems.push(`${at}: takes no body in the published document`);
        else problems.push(...contentDrift(op.requestBody.content, theirs.requestBody.content, `${at} body`));
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const other = theirs.responses?.[status];
        if (!other) problems.push(`${at} response ${status}: not in the published document`);
        else problems.push(...contentDrift(response.content, other.content, `${at} response ${status}`));
      }
    }
  }
  return problems;
}
