/**
 * The zod schemas (shared/src/cfs/schemas.ts) are the only judge of what CFS answers: what they accept comes back as
 * it was sent (unknown fields kept, so nothing the server adds is lost), and what they refuse is reported with the
 * field that was wrong, the bad record skipped and the others kept.
 */
import fc from 'fast-check';
import { CfsClient, cfsSchemas, partitionRecords } from '@cfs-batcher/shared';
import { json, startFakeServer, type FakeServer } from './fake-server';
import { failure } from '../helpers/cfs-failure';

/** As the client sees records: straight from JSON.parse. */
const asParsed = (x: unknown): unknown => JSON.parse(JSON.stringify(x));
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Any key but `__proto__`, which zod drops (see the test below); CFS never sends it. */
const key = fc.string().filter((k) => k !== '__proto__');
const extra = fc.dictionary(key, fc.jsonValue(), { maxKeys: 2 });

const stateLayer = fc.record(
  {
    clone_url: fc.string(),
    playbook: fc.string(),
    commit: fc.string(),
    status: fc.string(),
    session_name: optional(fc.string()),
    last_updated: optional(fc.string()),
  },
  { requiredKeys: ['clone_url', 'playbook', 'commit', 'status'] },
);
const desiredLayer = fc.record(
  {
    name: fc.string(),
    clone_url: fc.string(),
    source: fc.string(),
    commit: fc.string(),
    branch: fc.string(),
    playbook: fc.string(),
    status: fc.constantFrom('pending', 'applied', 'failed'),
  },
  { requiredKeys: [] },
);
const component = fc
  .tuple(
    fc.record(
      {
        id: fc.string({ minLength: 1 }),
        desired_config: fc.string(),
        enabled: fc.boolean(),
        error_count: fc.integer(),
        retry_policy: fc.integer(),
        tags: fc.dictionary(key, fc.string()),
        state: fc.array(stateLayer, { maxLength: 3 }),
        desired_state: fc.array(desiredLayer, { maxLength: 3 }),
        configuration_status: fc.string(),
        logs: fc.string(),
      },
      { requiredKeys: ['id'] },
    ),
    extra,
  )
  .map(([known, unknown]) => ({ ...unknown, ...known }));

const nullableString = fc.option(fc.string(), { nil: null });
const session = fc
  .tuple(
    fc.record(
      {
        name: fc.string({ minLength: 1 }),
        configuration: fc.record({ name: fc.string(), limit: nullableString }, { requiredKeys: [] }),
        ansible: fc.record(
          {
            config: nullableString,
            limit: nullableString,
            verbosity: fc.option(fc.integer(), { nil: null }),
            passthrough: nullableString,
          },
          { requiredKeys: [] },
        ),
        target: fc.record({ definition: fc.string(), groups: fc.jsonValue() }, { requiredKeys: [] }),
        status: fc.record(
          {
            artifacts: fc.option(fc.array(fc.jsonValue(), { maxLength: 2 }), { nil: null }),
            session: fc.record(
              {
                job: nullableString,
                start_time: nullableString,
                completion_time: nullableString,
                status: fc.constantFrom('pending', 'running', 'complete'),
                succeeded: fc.constantFrom('none', 'true', 'false', 'unknown'),
              },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
        tags: fc.option(fc.dictionary(key, fc.jsonValue()), { nil: null }),
        debug_on_failure: fc.jsonValue(),
        logs: fc.jsonValue(),
      },
      { requiredKeys: ['name'] },
    ),
    extra,
  )
  .map(([known, unknown]) => ({ ...unknown, ...known }));

describe('what the schemas accept comes back as CFS sent it', () => {
  test.each([
    ['component', component, cfsSchemas.component],
    ['session', session, cfsSchemas.session],
  ] as const)('any well-formed %s, unknown fields included', (_what, arbitrary, schema) => {
    fc.assert(
      fc.property(arbitrary.map(asParsed), (x) => {
        const parsed = schema.safeParse(x);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toStrictEqual(x);
      }),
      { numRuns: 500 },
    );
  });
});

test('a `__proto__` key is dropped, never made a prototype', () => {
  const parsed = cfsSchemas.component.parse(JSON.parse('{"id":"a","__proto__":{"x":1},"tags":{"__proto__":"v"}}'));
  expect(parsed).toStrictEqual({ id: 'a', tags: {} });
  expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
  expect((parsed as Record<string, unknown>).x).toBeUndefined();
});

describe('what they refuse names the field that was wrong', () => {
  test.each([
    ['component', '{"id":""}', /^id: /],
    ['component', '{"desired_config":"c"}', /^id: /],
    ['component', '{"id":"a","error_count":"three"}', /^error_count: /],
    ['component', '{"id":"a","error_count":1.5}', /^error_count: /],
    ['component', '{"id":"a","error_count":null}', /^error_count: /],
    ['component', '{"id":"a","enabled":"yes"}', /^enabled: /],
    ['component', '{"id":"a","tags":{"role":1}}', /^tags\.role: /],
    ['component', '{"id":"a","state":[{"clone_url":"u","playbook":"p","status":"s"}]}', /^state\.0\.commit: /],
    ['component', '{"id":"a","desired_state":[{"name":7}]}', /^desired_state\.0\.name: /],
    ['component', '[{"id":"a"}]', /^\(root\): /],
    ['session', '{"name":"s","ansible":{"limit":7}}', /^ansible\.limit: /],
    ['session', '{"name":"s","ansible":{"verbosity":1e400}}', /^ansible\.verbosity: /],
    ['session', '{"name":"s","configuration":{"name":null}}', /^configuration\.name: /],
    ['session', '{"name":"s","status":{"session":{"status":null}}}', /^status\.session\.status: /],
    ['session', '{"name":"s","tags":[]}', /^tags: /],
    ['componentPage', '{"components":{"a":1}}', /^components: /],
    ['componentPage', '{"components":[],"next":7}', /^next: /],
    ['sessionPage', '{"next":null}', /^sessions: /],
    ['options', '["not","options"]', /^\(root\): /],
  ] as const)('%s %s', (kind, text, problem) => {
    const { valid, invalid } = partitionRecords([JSON.parse(text)], cfsSchemas[kind], 'id');
    expect(valid).toEqual([]);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]!.problem).toMatch(problem);
  });

  test('a bad record is skipped, the others are kept, a hole counts as a record', () => {
    // eslint-disable-next-line no-sparse-arrays -- a hole is what a broken server's array can hold after a parse
    const items = [{ id: 'x1' }, { id: 'x2', error_count: 'three' }, , 7, { id: 'x3', extra: { kept: true } }];
    const { valid, invalid } = partitionRecords(items, cfsSchemas.component, 'id');
    expect(valid).toEqual([{ id: 'x1' }, { id: 'x3', extra: { kept: true } }]);
    expect(invalid.map((i) => [i.index, i.id])).toEqual([
      [1, 'x2'],
      [2, undefined],
      [3, undefined],
    ]);
    expect(invalid[0]!.problem).toMatch(/^error_count: /);
  });
});

describe('the client refuses a malformed answer with what was wrong', () => {
  let server: FakeServer;
  beforeEach(async () => {
    server = await startFakeServer();
  });
  afterEach(() => server.close());
  const client = () => new CfsClient({ baseUrl: server.baseUrl, retryBudgetMs: 0 });

  test('a session lookup names the bad field', async () => {
    server.on('GET /v3/sessions/batcher-1', json(200, { name: 'batcher-1', ansible: { limit: 7 } }));
    const err = await failure(client().getSession('batcher-1'));
    expect(err.kind).toBe('invalid-response');
    expect(err.message).toMatch(/^Unexpected response from CFS for GET .*\/sessions\/batcher-1: ansible\.limit: /);
  });

  test('an options answer that is not an object', async () => {
    server.on('GET /v3/options', json(200, ['not', 'options']));
    const err = await failure(client().getOptions());
    expect(err.kind).toBe('invalid-response');
    expect(err.message).toMatch(/\/options: \(root\): /);
  });
});
