/**
 * A fast check derived from a zod schema, for the answers a healthy CFS sends every cycle: at 50k pending components
 * zod's safeParse of every record (its checks, issue bookkeeping and copy) raises a steady cycle's CPU by half or
 * more, JIT included (0.33-0.47 s with this check, 0.61-0.69 s without, against a budget of 0.45 s). The check is built from the schema's own definition (`_zod.def`,
 * the introspection zod documents for library authors), so the shape is written once: a JSON value the check
 * accepts is one the schema accepts and would return unchanged, and it can be used as is. Anything else -- a value
 * the schema refuses, or returns changed -- goes to zod, which judges it and says what was wrong.
 *
 * Only the parts of zod the CFS schemas use are understood; a schema holding anything else (a refinement, a
 * transform, a default, a format) gets no fast check and is always judged by zod.
 */
import type { z } from 'zod';

/** Accepts only values the schema returns unchanged (deep-equal, same keys); may refuse more, never less. */
export type DerivedCheck = (value: unknown) => boolean;

/** A JSON object (not an array) whose own keys hold no `__proto__`, which zod drops when copying. */
function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return false;
  return Object.getPrototypeOf(x) === Object.prototype && !Object.prototype.hasOwnProperty.call(x, '__proto__');
}

type Def = z.core.$ZodTypes['_zod']['def'];
type CheckDef = z.core.$ZodChecks['_zod']['def'];

const defOf = (schema: z.core.$ZodType): Def => (schema as z.core.$ZodTypes)._zod.def;
const checksOf = (def: Def): CheckDef[] => (def.checks ?? []).map((c) => (c as z.core.$ZodChecks)._zod.def);

/** The checks of a string or number, each as a predicate; null when one is not understood. */
function valueChecks(def: Def): DerivedCheck[] | null {
  const out: DerivedCheck[] = [];
  for (const c of checksOf(def)) {
    if (c.check === 'min_length' && def.type === 'string') {
      const min = c.minimum;
      out.push((v) => (v as string).length >= min);
    } else if (c.check === 'number_format' && c.format === 'safeint') {
      out.push((v) => Number.isSafeInteger(v));
    } else if (c.check === 'greater_than' && typeof c.value === 'number') {
      const { value, inclusive } = c;
      out.push(inclusive ? (v) => (v as number) >= value : (v) => (v as number) > value);
    } else {
      return null;
    }
  }
  return out;
}

const all = (base: DerivedCheck, extra: DerivedCheck[]): DerivedCheck =>
  extra.length === 0
    ? base
    : (v) => {
        if (!base(v)) return false;
        for (let i = 0; i < extra.length; i++) if (!extra[i]!(v)) return false;
        return true;
      };

/**
 * One field of an object, flattened so that the usual field (an optional string, a boolean, ...) is judged inline in
 * the object's loop, without a call per wrapper: under `--lite-mode` every call counts at 50k records a cycle.
 */
interface Field {
  key: string;
  undef: boolean;
  nul: boolean;
  type: 'string' | 'boolean' | 'any' | 'other';
  check: DerivedCheck;
}

function fieldOf(key: string, schema: z.core.$ZodType): Field | null {
  let undef = false;
  let nul = false;
  let def = defOf(schema);
  while ((def.type === 'optional' || def.type === 'nullable') && !def.checks?.length) {
    if (def.type === 'optional') undef = true;
    else nul = true;
    def = defOf(def.innerType);
  }
  const check = derive(schema);
  if (!check) return null;
  const bare = !def.checks?.length && !('coerce' in def && def.coerce);
  const type =
    bare && (def.type === 'string' || def.type === 'boolean')
      ? def.type
      : bare && (def.type === 'unknown' || def.type === 'any')
        ? 'any'
        : 'other';
  return { key, undef, nul, type, check };
}

function objectCheck(shape: Record<string, z.core.$ZodType>, loose: boolean): DerivedCheck | null {
  const fields: Field[] = [];
  for (const k of Object.keys(shape)) {
    const f = fieldOf(k, shape[k]!);
    if (!f) return null;
    fields.push(f);
  }
  const known = new Set(Object.keys(shape));
  return (v) => {
    if (!isPlainObject(v)) return false;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const x = v[f.key];
      if (x === undefined ? f.undef : x === null ? f.nul : false) continue;
      if (
        f.type === 'string'
          ? typeof x === 'string'
          : f.type === 'boolean'
            ? typeof x === 'boolean'
            : f.type === 'any' || f.check(x)
      )
        continue;
      return false;
    }
    if (!loose) for (const k in v) if (!known.has(k)) return false; // zod would drop or refuse it
    return true;
  };
}

/** The check of one schema node; null when the node (or one inside it) is not understood. */
function derive(schema: z.core.$ZodType): DerivedCheck | null {
  const def = defOf(schema);
  switch (def.type) {
    case 'unknown':
    case 'any':
      return def.checks?.length ? null : () => true;
    case 'string': {
      const extra = def.coerce ? null : valueChecks(def);
      return extra && all((v) => typeof v === 'string', extra);
    }
    case 'number': {
      // finite: JSON.parse gives Infinity for 1e400, which z.number() refuses
      const extra = def.coerce ? null : valueChecks(def);
      return extra && all((v) => Number.isFinite(v), extra);
    }
    case 'boolean':
      return def.checks?.length || def.coerce ? null : (v) => typeof v === 'boolean';
    case 'literal': {
      const values = new Set<unknown>(def.values);
      return def.checks?.length ? null : (v) => values.has(v);
    }
    case 'enum': {
      const values = new Set<unknown>(Object.values(def.entries));
      return def.checks?.length ? null : (v) => values.has(v);
    }
    case 'optional':
    case 'nullable': {
      const inner = def.checks?.length ? null : derive(def.innerType);
      if (!inner) return null;
      return def.type === 'optional' ? (v) => v === undefined || inner(v) : (v) => v === null || inner(v);
    }
    case 'array': {
      const item = def.checks?.length ? null : derive(def.element);
      if (!item) return null;
      return (v) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (!(i in v) || !item(v[i])) return false; // a hole would become undefined
        return true;
      };
    }
    case 'record': {
      const key = defOf(def.keyType);
      const value = derive(def.valueType);
      if (def.checks?.length || key.type !== 'string' || key.checks?.length || !value) return null;
      return (v) => {
        if (!isPlainObject(v)) return false;
        for (const k in v) if (!value(v[k])) return false;
        return true;
      };
    }
    case 'object': {
      if (def.checks?.length) return null;
      const catchall = def.catchall && defOf(def.catchall).type;
      if (catchall !== undefined && catchall !== 'unknown' && catchall !== 'never') return null;
      return objectCheck(def.shape, catchall === 'unknown');
    }
    default:
      return null;
  }
}

const derived = new WeakMap<z.core.$ZodType, DerivedCheck | null>();

/** The schema's derived check, built on first use; null when the schema uses something it does not understand. */
export function derivedCheck(schema: z.core.$ZodType): DerivedCheck | null {
  if (!derived.has(schema)) derived.set(schema, derive(schema));
  return derived.get(schema)!;
}

/**
 * `schema.safeParse(value)` for a value from JSON.parse, without zod's work when the derived check accepts it: the
 * value is then returned as is (it equals what zod would return).
 */
export function safeParseAnswer<T>(schema: z.ZodType<T>, value: unknown): z.ZodSafeParseResult<T> {
  if (derivedCheck(schema)?.(value)) return { success: true, data: value as T };
  return schema.safeParse(value);
}
