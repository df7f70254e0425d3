/**
 * Case 8 (bad input), CFS answers and options: the client's schemas, the batcher's option parser, its component
 * validator and its batch book never throw on arbitrary input, explain every rejection, and never put components
 * together that do not belong together (so no wrong session can come out of a bad answer).
 */
import fc from 'fast-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CfsClient, CfsError, cfsSchemas, partitionRecords } from '@cfs-batcher/shared';

const componentSchema = cfsSchemas.component;
import { DEFAULT_OPTIONS, OPTION_NAMES, parseOptions } from '../../batcher/src/rules/options';
import { toBatchComponent, type BatchComponent } from '../../batcher/src/rules/component';
import { BatchBook } from '../../batcher/src/rules/batch-book';
import { batchState, sharedTags } from '../../batcher/src/rules/batch';
import { commonTags } from '../helpers/invariants';

// ---- arbitraries -------------------------------------------------------------------------------------------------

const layerStatus = fc.constantFrom('pending', 'applied', 'failed', 'skipped', 'Pending', 'incomplete');
const word = fc.constantFrom('a', 'b', 'c', 'cfg-1', 'cfg-2', 'site.yml', 'x'.repeat(40));

const desiredLayer = fc.record(
  { clone_url: word, playbook: word, commit: fc.constantFrom('c1', 'c2', 'c3', ''), status: layerStatus, name: word },
  { requiredKeys: [] },
);
const stateLayer = fc.record({
  clone_url: word,
  playbook: word,
  commit: word,
  status: layerStatus,
  session_name: word,
  last_updated: fc.constantFrom('2024-01-01T00:00:00Z', ''),
});

/** Mostly well-formed component records, with every field sometimes missing. */
const plausibleComponent = fc.record(
  {
    id: fc.constantFrom('x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8'),
    desired_config: fc.constantFrom('cfg-1', 'cfg-2', ''),
    enabled: fc.boolean(),
    error_count: fc.integer({ min: -1, max: 5 }),
    retry_policy: fc.nat({ max: 5 }),
    tags: fc.dictionary(fc.constantFrom('role', 'rack', 'owner'), fc.constantFrom('1', '2')),
    state: fc.array(stateLayer, { maxLength: 3 }),
    desired_state: fc.array(desiredLayer, { maxLength: 4 }),
    configuration_status: fc.constantFrom('pending', 'configured', 'failed', 'unconfigured'),
  },
  { requiredKeys: [] },
);

/** Anything a broken server might put in a record slot. */
const junkRecord = fc.oneof(
  fc.anything(),
  plausibleComponent.map((c) => ({ ...c, error_count: 'three' })),
  fc.constant(null),
);
const record = fc.oneof({ weight: 4, arbitrary: plausibleComponent }, { weight: 1, arbitrary: junkRecord });

// ---- schemas -----------------------------------------------------------------------------------------------------

describe('CFS record validation (property)', () => {
  it('partitions any page into valid and explained-invalid records, losing none', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 20 }), (items) => {
        const { valid, invalid } = partitionRecords(items, cfsSchemas.component, 'id');
        expect(valid.length + invalid.length).toBe(items.length);
        expect(new Set(invalid.map((i) => i.index)).size).toBe(invalid.length);
        for (const bad of invalid) {
          expect(bad.problem.length).toBeGreaterThan(0);
          expect(componentSchema.safeParse(items[bad.index]).success).toBe(false);
        }
        for (const c of valid) {
          expect(typeof c.id).toBe('string');
          if (c.error_count !== undefined) expect(Number.isInteger(c.error_count)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never throws validating arbitrary session records', () => {
    fc.assert(
      fc.property(fc.array(fc.anything(), { maxLength: 10 }), (items) => {
        const { valid, invalid } = partitionRecords(items, cfsSchemas.session, 'name');
        expect(valid.length + invalid.length).toBe(items.length);
      }),
      { numRuns: 200 },
    );
  });
});

// ---- the client against a server answering garbage ---------------------------------------------------------------

describe('CfsClient against arbitrary answers (property)', () => {
  let server: http.Server;
  let reply: { status: number; body: string } = { status: 200, body: '{}' };
  let baseUrl = '';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(reply.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const bodyArb = fc.oneof(
    fc
      .record({ components: fc.array(record, { maxLength: 6 }), next: fc.constant(null) })
      .map((b) => JSON.stringify(b)),
    fc.json(),
    fc.string(),
    fc.constant(''),
    fc.constant('{"components": null}'),
    fc.constant('{"components": [], "next": {"after_id": null}}'),
  );

  it('either returns validated records or fails with a CfsError that says why', async () => {
    const client = new CfsClient({ baseUrl, retryBudgetMs: 0, requestTimeoutMs: 2000, connectTimeoutMs: 1000 });
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.constantFrom(200, 200, 200, 404, 500, 503), async (body, status) => {
        reply = { status, body };
        try {
          const page = await client.listAllComponents({ status: 'pending' });
          expect(status).toBe(200);
          for (const c of page.components) expect(componentSchema.safeParse(c).success).toBe(true);
          for (const i of page.invalid) expect(i.problem).not.toBe('');
        } catch (err) {
          expect(err).toBeInstanceOf(CfsError);
          const e = err as CfsError;
          expect(e.message.length).toBeGreaterThan(10);
          if (status !== 200) expect(e.kind).toBe('http');
          else expect(e.kind).toBe('invalid-response');
        }
      }),
      { numRuns: 60 },
    );
  });

  it('never turns a garbage session answer into a session', async () => {
    const client = new CfsClient({ baseUrl, retryBudgetMs: 0, requestTimeoutMs: 2000, connectTimeoutMs: 1000 });
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.json(), fc.constant('{"name": ""}'), fc.constant('[]')), async (body) => {
        reply = { status: 200, body };
        const parsedOk = (() => {
          try {
            return cfsSchemas.session.safeParse(JSON.parse(body)).success;
          } catch {
            return false;
          }
        })();
        const got = await client.getSession('batcher-x').then(
          (s) => ({ ok: true as const, s }),
          (e: unknown) => ({ ok: false as const, e }),
        );
        expect(got.ok).toBe(parsedOk);
        if (!got.ok) expect(got.e).toBeInstanceOf(CfsError);
      }),
      { numRuns: 60 },
    );
  });
});

// ---- options -----------------------------------------------------------------------------------------------------

describe('batcher options (property)', () => {
  const optionValue = fc.oneof(
    fc.integer({ min: -5, max: 100 }),
    fc.boolean(),
    fc.string(),
    fc.constant(null),
    fc.double(),
    fc.constantFrom('DEBUG', 'info', 'Warning', 'ERROR', 'TRACE'),
  );
  const optionsArb = fc.oneof(
    fc.dictionary(fc.constantFrom(...OPTION_NAMES, 'other_option'), optionValue),
    fc.anything(),
  );

  it('never throws; every value kept is valid and every refused value is explained', () => {
    fc.assert(
      fc.property(optionsArb, (raw) => {
        const r = parseOptions(raw);
        const o = r.options;
        expect(Number.isInteger(o.batcher_check_interval) && o.batcher_check_interval >= 1).toBe(true);
        expect(Number.isInteger(o.batch_size) && o.batch_size >= 1).toBe(true);
        expect(Number.isInteger(o.batch_window) && o.batch_window >= 0).toBe(true);
        expect(Number.isInteger(o.batcher_pending_timeout) && o.batcher_pending_timeout >= 1).toBe(true);
        expect(typeof o.batcher_disable).toBe('boolean');
        expect(['DEBUG', 'INFO', 'WARNING', 'ERROR']).toContain(o.logging_level);
        if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
          const rec = raw as Record<string, unknown>;
          for (const name of OPTION_NAMES) {
            if (!(name in rec) || rec[name] === undefined) continue;
            const problem = r.problems.find((p) => p.option === name);
            // A value either made it through unchanged (modulo level case) or is named in a problem.
            const taken =
              o[name] === rec[name] ||
              (name === 'logging_level' && typeof rec[name] === 'string' && rec[name].toUpperCase() === o[name]);
            expect(taken || (problem !== undefined && problem.message.includes(name))).toBe(true);
            if (problem) expect(o[name]).toEqual(DEFAULT_OPTIONS[name]);
          }
        } else {
          expect(r.problems.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });
});

// ---- components and batches: no wrong session from bad records -------------------------------------------------

describe('component validation and batching (property)', () => {
  it('never throws on a validated record, and a rejection names the component and the problem', () => {
    fc.assert(
      fc.property(plausibleComponent, (raw) => {
        const parsed = componentSchema.safeParse(raw);
        if (!parsed.success) return;
        const r = toBatchComponent(parsed.data);
        if (r.ok) {
          const pendingIdx = (raw.desired_state ?? []).flatMap((l, i) =>
            String(l.status).toLowerCase() === 'pending' ? [String(i)] : [],
          );
          expect(r.component.configLimit).toBe(pendingIdx.join(','));
          expect(r.component.configName).toBe(raw.desired_config);
        } else {
          expect(r.reason.length).toBeGreaterThan(3);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('files every valid pending component into exactly one batch of its own key, within batch_size', () => {
    fc.assert(
      fc.property(
        fc.array(plausibleComponent, { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        (raws, batchSize) => {
          const book = new BatchBook();
          const accepted = new Map<string, BatchComponent>();
          let now = 0;
          for (const raw of raws) {
            const parsed = componentSchema.safeParse(raw);
            if (!parsed.success) continue;
            const r = toBatchComponent(parsed.data);
            if (!r.ok) continue;
            book.add(r.component, batchSize, (now += 10));
            accepted.set(r.component.id, r.component);
          }
          const seen = new Map<string, number>();
          for (const b of book.all()) {
            expect(batchState(b)).toBe('queued');
            expect(b.members.size).toBeGreaterThan(0);
            expect(b.members.size).toBeLessThanOrEqual(batchSize);
            const members = [...b.members.values()].filter((m): m is BatchComponent => m !== null);
            for (const m of members) {
              expect(m.batchKey).toBe(b.key);
              expect(m.configName).toBe(b.configName);
              expect(m.configLimit).toBe(b.configLimit);
              seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
              // The batch holds the latest snapshot of each member.
              expect(m).toBe(accepted.get(m.id));
            }
            expect(sharedTags(members) ?? {}).toEqual(
              commonTags(members.map((m) => ({ pending_layers: '', latest_status: '', tags: m.tags }))),
            );
          }
          expect([...seen.keys()].sort()).toEqual([...accepted.keys()].sort());
          for (const n of seen.values()) expect(n).toBe(1);
        },
      ),
      { numRuns: 300 },
    );
  });
});
