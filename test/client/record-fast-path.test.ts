/**
 * The fast paths (fast-checks.ts) must never accept what their zod schema rejects, and what they accept must equal
 * what the schema would have returned, so skipping zod (its copy, and loading it at all) changes nothing but memory.
 */
import fc from 'fast-check';
import {
  ANSWER_RULES,
  cfsSchemas,
  isPlainComponent,
  isPlainSession,
  neverFast,
  partitionRecords,
  type AnswerRule,
} from '@cfs-batcher/shared';

const componentSchema = cfsSchemas().component;

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

function agreesWithSchema(x: unknown, rule: AnswerRule<unknown> = ANSWER_RULES.component): void {
  const parsed = rule.schema().safeParse(x);
  if (rule.fast(x)) {
    expect(parsed.success).toBe(true);
    expect(parsed.success && parsed.data).toStrictEqual(x);
  }
}

/** Each JSON text is refused by the rule's fast path (zod decides), and zod agrees with whatever it would accept. */
function expectFastPathRefuses(texts: string[], rule: AnswerRule<unknown> = ANSWER_RULES.component): void {
  for (const text of texts) {
    const x = JSON.parse(text) as unknown;
    expect(rule.fast(x)).toBe(false);
    agreesWithSchema(x, rule);
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
    expectFastPathRefuses([
      '{"id":"a","__proto__":{"x":1}}',
      '{"id":"a","tags":{"__proto__":"v"}}',
      '{"id":"a","desired_state":[{"__proto__":{}}]}',
      '{"id":"a","error_count":1152921504606846976}',
      '{"id":"a","error_count":null}',
      '{"id":""}',
      '[{"id":"a"}]',
    ]);
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
        const slow = partitionRecords(items, { fast: neverFast, schema: () => componentSchema }, 'id');
        const fast = partitionRecords(items, ANSWER_RULES.component, 'id');
        expect(fast).toStrictEqual(slow);
      }),
      { numRuns: 300 },
    );
  });
});

const nullableString = maybe(fc.oneof(fc.string(), fc.constant(null)));
const session = fc.record(
  {
    name: maybe(fc.string()),
    configuration: maybe(fc.record({ name: maybe(fc.string()), limit: nullableString }, { requiredKeys: [] })),
    ansible: maybe(
      fc.record(
        {
          config: nullableString,
          limit: nullableString,
          verbosity: maybe(fc.oneof(fc.integer(), fc.constant(null))),
          passthrough: nullableString,
        },
        { requiredKeys: [] },
      ),
    ),
    target: maybe(fc.record({ definition: maybe(fc.string()), groups: anyJson }, { requiredKeys: [] })),
    status: maybe(
      fc.record(
        {
          artifacts: maybe(fc.oneof(fc.array(anyJson, { maxLength: 2 }), fc.constant(null))),
          session: maybe(
            fc.record(
              {
                job: nullableString,
                start_time: nullableString,
                completion_time: nullableString,
                status: maybe(fc.constantFrom('pending', 'running', 'complete')),
                succeeded: maybe(fc.constantFrom('none', 'true', 'false', 'unknown')),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
    tags: maybe(fc.oneof(fc.dictionary(fc.string(), anyJson), fc.constant(null))),
    debug_on_failure: anyJson,
    logs: anyJson,
    unknown_field: anyJson,
  },
  { requiredKeys: [] },
);

describe('isPlainSession and the other answers', () => {
  test('isPlainSession accepts only sessions the schema accepts unchanged', () => {
    fc.assert(
      fc.property(session.map(asParsed), (x) => agreesWithSchema(x, ANSWER_RULES.session)),
      { numRuns: 2000 },
    );
  });

  test('isPlainSession refuses the JSON shapes zod treats specially', () => {
    expectFastPathRefuses(
      [
        '{"name":"s","__proto__":{}}',
        '{"name":"s","status":{"session":{"__proto__":{}}}}',
        '{"name":"s","ansible":{"limit":7}}',
        '{"name":"s","ansible":{"verbosity":1e400}}',
        '{"name":"s","ansible":{"verbosity":-1e400}}',
        '{"name":"s","configuration":{"name":null}}',
        '{"name":"s","status":{"session":{"status":null}}}',
        '{"name":"s","tags":[]}',
        '{"name":""}',
      ],
      ANSWER_RULES.session,
    );
  });

  test('takes the usual session (otherwise the fast path would be dead code)', () => {
    const raw = asParsed({
      name: 'batcher-0f3c',
      configuration: { name: 'compute-23.7', limit: '' },
      ansible: { config: 'cfs-default-ansible-cfg', limit: 'x1,x2', verbosity: 0, passthrough: null },
      target: { definition: 'dynamic', groups: [] },
      status: {
        artifacts: [],
        session: { job: null, start_time: 't', completion_time: null, status: 'pending', succeeded: 'none' },
      },
      tags: { bos_session: 'b' },
      debug_on_failure: false,
      logs: 'ara',
    });
    expect(isPlainSession(raw)).toBe(true);
  });

  test('page envelopes and options agree with their schemas', () => {
    const envelope = (key: string) =>
      fc.record(
        {
          [key]: maybe(fc.array(anyJson, { maxLength: 3 })),
          next: maybe(fc.oneof(fc.constant(null), fc.dictionary(fc.string(), anyJson))),
          other: anyJson,
        },
        { requiredKeys: [] },
      );
    fc.assert(
      fc.property(envelope('components').map(asParsed), (x) => agreesWithSchema(x, ANSWER_RULES.componentPage)),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(envelope('sessions').map(asParsed), (x) => agreesWithSchema(x, ANSWER_RULES.sessionPage)),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.dictionary(fc.string(), anyJson), anyJson).map(asParsed), (x) =>
        agreesWithSchema(x, ANSWER_RULES.options),
      ),
      { numRuns: 500 },
    );
    expectFastPathRefuses(
      ['{"components":[],"next":{"__proto__":{}}}', '{"__proto__":{},"components":[]}', '[]'],
      ANSWER_RULES.componentPage,
    );
  });
});
