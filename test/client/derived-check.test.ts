/**
 * The fast check derived from each CFS schema (shared/src/cfs/derived-check.ts) must agree with zod both ways on
 * whatever JSON arrives: it accepts a value exactly when zod accepts it and returns it unchanged (then the client uses
 * the value as is), and refuses everything else (then zod judges it and says what was wrong). The values are
 * generated from the schemas themselves, so every field of every schema is exercised, right and wrong.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { z } from 'zod';
import { cfsSchemas, derivedCheck, safeParseAnswer } from '@cfs-batcher/shared';

/** Values of every JSON type, for a field of the wrong type. */
const anyJson = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);
const maybe = (right: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: anyJson });
/** Keys CFS might send, with the ones zod treats specially now and then. */
const key = fc.oneof({ weight: 9, arbitrary: fc.string() }, { weight: 1, arbitrary: fc.constant('__proto__') });

/** Mostly valid values for a schema: each node right six times in seven, otherwise any JSON. */
function arbitraryOf(schema: z.core.$ZodType): fc.Arbitrary<unknown> {
  const def = (schema as z.core.$ZodTypes)._zod.def;
  switch (def.type) {
    case 'string':
      return maybe(fc.oneof(fc.string(), fc.constant('')));
    case 'number':
      return maybe(fc.oneof(fc.integer(), fc.constant(-0), fc.constant(1.5), fc.constant(2 ** 60), fc.double()));
    case 'boolean':
      return maybe(fc.boolean());
    case 'unknown':
      return fc.jsonValue();
    case 'literal':
    case 'enum':
      return maybe(fc.constantFrom(...(def.type === 'enum' ? Object.values(def.entries) : def.values)));
    case 'optional':
      return fc.option(arbitraryOf(def.innerType), { nil: undefined, freq: 3 });
    case 'nullable':
      return fc.option(arbitraryOf(def.innerType), { nil: null, freq: 3 });
    case 'array':
      return maybe(fc.array(arbitraryOf(def.element), { maxLength: 3 }));
    case 'record':
      return maybe(fc.dictionary(key, arbitraryOf(def.valueType), { maxKeys: 3 }));
    case 'object': {
      const fields = Object.fromEntries(Object.entries(def.shape).map(([k, s]) => [k, arbitraryOf(s)]));
      return maybe(
        fc
          .tuple(fc.record(fields, { requiredKeys: [] }), fc.dictionary(key, fc.jsonValue(), { maxKeys: 2 }))
          .map(([known, extra]) => ({ ...extra, ...known })),
      );
    }
    default:
      throw new Error(`no generator for a ${def.type} schema: extend arbitraryOf`);
  }
}

/** As the client sees answers: straight from JSON.parse (which makes a real `__proto__` key). */
const asParsed = (x: unknown): unknown => JSON.parse(JSON.stringify(x) ?? 'null');

describe.each(Object.entries(cfsSchemas))('the check derived from cfsSchemas.%s', (_name, schema) => {
  const check = derivedCheck(schema)!;

  test('exists (otherwise every answer pays for zod)', () => {
    expect(check).toEqual(expect.any(Function));
  });

  test('accepts exactly what zod accepts and returns unchanged', () => {
    let fast = 0;
    let slow = 0;
    fc.assert(
      fc.property(arbitraryOf(schema).map(asParsed), (x) => {
        const parsed = schema.safeParse(x);
        const unchanged = parsed.success && isDeepStrictEqual(parsed.data, x);
        expect(check(x)).toBe(unchanged);
        if (unchanged) fast++;
        else slow++;
      }),
      { numRuns: 1500 },
    );
    // both sides were exercised, or the property proves nothing
    expect(fast).toBeGreaterThan(10);
    expect(slow).toBeGreaterThan(10);
  });
});

test.each([
  ['session', '{"name":"s","ansible":{"verbosity":1e400}}'],
  ['session', '{"name":"s","ansible":{"verbosity":-1e400}}'],
  ['component', '{"id":"a","error_count":1152921504606846976}'],
  ['component', '{"id":"a","__proto__":{"x":1}}'],
  ['component', '{"id":"a","desired_state":[{"__proto__":{}}]}'],
  ['componentPage', '{"components":[],"next":{"__proto__":{}}}'],
] as const)('JSON that only a text can hold goes to zod: %s %s', (name, text) => {
  const x = JSON.parse(text) as unknown;
  expect(derivedCheck(cfsSchemas[name])!(x)).toBe(false);
});

test('a hole in an array goes to zod', () => {
  const check = derivedCheck(cfsSchemas.componentPage)!;
  // eslint-disable-next-line no-sparse-arrays -- the hole is the point
  expect(check({ components: [{ id: 'a' }, , { id: 'b' }], next: null })).toBe(false);
  expect(check({ components: [{ id: 'a' }, { id: 'b' }], next: null })).toBe(true);
});

test('safeParseAnswer gives what zod gives, and the value itself when the check takes it', () => {
  const good = asParsed({ id: 'x1', enabled: true, extra: { kept: 1 } });
  const r = safeParseAnswer(cfsSchemas.component, good);
  expect(r.success && r.data).toBe(good);
  const bad = safeParseAnswer(cfsSchemas.component, { id: 'x1', error_count: 'three' });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0]?.path).toEqual(['error_count']);
});

test('a schema using what the derivation does not understand gets no check (zod always judges)', () => {
  for (const schema of [
    z.string().email(),
    z.string().max(3),
    z.number().refine((n) => n > 1),
    z.string().transform((s) => s.length),
    z.string().default('x'),
    z.coerce.number(),
    z.union([z.string(), z.number()]),
    z.looseObject({ a: z.string().trim() }),
    z.object({ a: z.string() }).catchall(z.string()),
    z.record(z.string().min(2), z.string()),
  ]) {
    expect(derivedCheck(schema)).toBeNull();
  }
});

test('an object that is not loose takes no key its shape lacks (zod would drop or refuse it)', () => {
  for (const schema of [z.object({ a: z.string() }), z.strictObject({ a: z.string() })]) {
    const check = derivedCheck(schema)!;
    expect(check({ a: 'x' })).toBe(true);
    expect(check({ a: 'x', b: 1 })).toBe(false);
  }
});
