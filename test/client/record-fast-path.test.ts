/**
 * The component list's fast path (isPlainComponent) must never accept what componentSchema rejects, and what it
 * accepts must equal what the schema would have returned, so skipping zod's copy changes nothing but memory.
 */
import fc from 'fast-check';
import { componentSchema, isPlainComponent, partitionRecords } from '@cfs-batcher/shared';

/** Values of every JSON type, the right one most of the time. */
const anyJson = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);
const maybe = <T>(right: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: anyJson });

const stateLayer = fc.record(
  {
    clone_url: maybe(fc.string()),
    playbook: maybe(fc.string()),
    commit: maybe(fc.string()),
    status: maybe(fc.string()),
    session_name: maybe(fc.string()),
    last_updated: maybe(fc.string()),
  },
  { requiredKeys: [] },
);
const desiredLayer = fc.record(
  {
    name: maybe(fc.string()),
    clone_url: maybe(fc.string()),
    commit: maybe(fc.string()),
    playbook: maybe(fc.string()),
    status: maybe(fc.constantFrom('pending', 'applied', 'failed')),
    extra: anyJson,
  },
  { requiredKeys: [] },
);
const component = fc.record(
  {
    id: maybe(fc.string()),
    desired_config: maybe(fc.string()),
    enabled: maybe(fc.boolean()),
    error_count: maybe(fc.oneof(fc.integer(), fc.constant(2 ** 60), fc.constant(-0), fc.constant(1.5))),
    retry_policy: maybe(fc.integer()),
    tags: maybe(fc.dictionary(fc.string(), maybe(fc.string()))),
    state: maybe(fc.array(maybe(stateLayer), { maxLength: 3 })),
    desired_state: maybe(fc.array(maybe(desiredLayer), { maxLength: 3 })),
    configuration_status: maybe(fc.string()),
    logs: maybe(fc.string()),
    unknown_field: anyJson,
  },
  { requiredKeys: [] },
);

/** As the client sees records: straight from JSON.parse. */
const asParsed = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

function agreesWithSchema(x: unknown): void {
  const parsed = componentSchema.safeParse(x);
  if (isPlainComponent(x)) {
    expect(parsed.success).toBe(true);
    expect(parsed.success && parsed.data).toStrictEqual(x);
  }
}

describe('isPlainComponent', () => {
  test('accepts only records the schema accepts unchanged', () => {
    fc.assert(
      fc.property(component.map(asParsed), (x) => agreesWithSchema(x)),
      { numRuns: 2000 },
    );
  });

  test('refuses the JSON shapes zod treats specially', () => {
    const cases = [
      '{"id":"a","__proto__":{"x":1}}',
      '{"id":"a","tags":{"__proto__":"v"}}',
      '{"id":"a","desired_state":[{"__proto__":{}}]}',
      '{"id":"a","error_count":1152921504606846976}',
      '{"id":"a","error_count":null}',
      '{"id":""}',
      '[{"id":"a"}]',
    ];
    for (const c of cases) {
      const x = JSON.parse(c) as unknown;
      expect(isPlainComponent(x)).toBe(false);
      agreesWithSchema(x);
    }
  });

  test('takes the usual pending record (otherwise the fast path would be dead code)', () => {
    const raw = asParsed({
      id: 'x1000c0s0b0n0',
      desired_config: 'compute-23.7',
      enabled: true,
      error_count: 0,
      state: [
        { clone_url: 'u', playbook: 'site.yml', commit: 'c', status: 'applied', session_name: 's', last_updated: 't' },
      ],
      tags: { bos_session: 'b' },
      configuration_status: 'pending',
      desired_state: [{ name: 'cos', clone_url: 'u', commit: 'c', playbook: 'site.yml', status: 'pending' }],
      logs: 'ara',
    });
    expect(isPlainComponent(raw)).toBe(true);
  });

  test('partitionRecords gives the same result with and without it', () => {
    fc.assert(
      fc.property(fc.array(component.map(asParsed), { maxLength: 8 }), (items) => {
        const slow = partitionRecords(items, componentSchema, 'id');
        const fast = partitionRecords(items, componentSchema, 'id', isPlainComponent);
        expect(fast).toStrictEqual(slow);
      }),
      { numRuns: 300 },
    );
  });
});
