/**
 * Case 8 (bad input), heartbeat files: whatever is in the file, the reader never throws, and every rejection has a
 * reason and says what was wrong. A valid heartbeat is accepted exactly as written.
 */
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  HEARTBEAT_MAX_BYTES,
  HEARTBEAT_PHASES,
  parseHeartbeat,
  readHeartbeat,
  type Heartbeat,
} from '@cfs-batcher/shared';
import { makeTempDir } from '../helpers/tmp';

const ms = fc.integer({ min: 0, max: 4_102_444_800_000 });
const nat = fc.nat({ max: 1_000_000 });

export const heartbeatArb: fc.Arbitrary<Heartbeat> = fc.record({
  format: fc.constant(1 as const),
  instance_id: fc.uuid(),
  pid: fc.integer({ min: 1, max: 4_194_304 }),
  started_at_ms: ms,
  written_at_ms: ms,
  sequence: nat,
  cycle: nat,
  phase: fc.constantFrom(...HEARTBEAT_PHASES),
  phase_started_at_ms: ms,
  phase_is_wait: fc.boolean(),
  last_cycle: fc.option(
    fc.record(
      {
        completed_at_ms: ms,
        duration_ms: fc.nat(),
        outcome: fc.constantFrom('ok' as const, 'error' as const),
        error: fc.string(),
      },
      { requiredKeys: ['completed_at_ms', 'duration_ms', 'outcome'] },
    ),
    { nil: null },
  ),
  options: fc.record({
    batcher_check_interval: fc.integer({ min: 1, max: 3600 }),
    batch_window: fc.nat({ max: 3600 }),
    batch_size: fc.integer({ min: 1, max: 1000 }),
    batcher_pending_timeout: fc.integer({ min: 1, max: 86400 }),
  }),
  disabled: fc.boolean(),
  backoff: fc.record({ active: fc.boolean(), seconds: fc.nat({ max: 3600 }), until_ms: fc.option(ms, { nil: null }) }),
  cfs: fc.record({
    last_success_ms: fc.option(ms, { nil: null }),
    last_error: fc.option(fc.record({ at_ms: ms, kind: fc.string(), message: fc.string() }), { nil: null }),
  }),
  counters: fc.record({
    pending_seen: nat,
    batches_queued: nat,
    batches_active: nat,
    sessions_created_total: nat,
    last_session_created_ms: fc.option(ms, { nil: null }),
  }),
});

const REASONS = new Set(['empty', 'not_json', 'invalid']);

/** Values wrong for every field of the heartbeat ('' fails the non-empty id, the enum and every non-string). */
const wrongValue = fc.constantFrom<unknown>(-1.5, [], { bogus: true }, '');

describe('parseHeartbeat (property)', () => {
  it('never throws on arbitrary text, and every rejection is explained', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.string({ unit: 'binary' })), (text) => {
        const r = parseHeartbeat(text);
        if (!r.ok) {
          expect(REASONS.has(r.reason)).toBe(true);
          expect(r.detail.length).toBeGreaterThan(10);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('accepts any valid heartbeat exactly as written', () => {
    fc.assert(
      fc.property(heartbeatArb, (hb) => {
        const r = parseHeartbeat(JSON.stringify(hb));
        expect(r.ok).toBe(true);
        if (r.ok) expect(r.heartbeat).toEqual(hb);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects a heartbeat with any one field of the wrong type, naming that field', () => {
    fc.assert(
      fc.property(
        heartbeatArb,
        fc.constantFrom(...(Object.keys(heartbeatArbKeys) as (keyof Heartbeat)[])),
        wrongValue,
        (hb, key, bad) => {
          // last_cycle, options... are objects/nullable: `{bogus:true}` or `[]` are still wrong for all of them.
          const mutated = { ...hb, [key]: bad };
          const r = parseHeartbeat(JSON.stringify(mutated));
          expect(r.ok).toBe(false);
          if (!r.ok) {
            expect(r.reason).toBe('invalid');
            expect(r.detail).toContain(String(key));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects every truncation of a valid heartbeat (a torn write) as not JSON or empty', () => {
    fc.assert(
      fc.property(heartbeatArb, fc.double({ min: 0, max: 1, noNaN: true }), (hb, frac) => {
        const text = JSON.stringify(hb);
        const cut = text.slice(0, Math.floor(frac * (text.length - 1)));
        const r = parseHeartbeat(cut);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(['empty', 'not_json']).toContain(r.reason);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects a heartbeat of another format version', () => {
    fc.assert(
      fc.property(
        heartbeatArb,
        fc.integer().filter((n) => n !== 1),
        (hb, format) => {
          const r = parseHeartbeat(JSON.stringify({ ...hb, format }));
          expect(r.ok).toBe(false);
          if (!r.ok) expect(r.detail).toContain('format');
        },
      ),
      { numRuns: 100 },
    );
  });
});

// Keys of the heartbeat, taken from one sample (keeps the list in step with the schema).
const heartbeatArbKeys = fc.sample(heartbeatArb, 1)[0] as Heartbeat;

describe('readHeartbeat on real files (property)', () => {
  const tmp = makeTempDir('fuzz-hb');
  afterAll(() => tmp.cleanup());

  it('never throws whatever bytes the file holds, and agrees with parseHeartbeat', async () => {
    const file = path.join(tmp.dir, 'hb.json');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 2048 }),
          heartbeatArb.map((h) => Buffer.from(JSON.stringify(h))),
        ),
        async (bytes) => {
          writeFileSync(file, bytes);
          const r = await readHeartbeat(file);
          const p = parseHeartbeat(Buffer.from(bytes).toString('utf8'));
          expect(r.ok).toBe(p.ok);
          if (!r.ok) expect(r.detail).not.toBe('');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses oversized files without parsing them, and says why', async () => {
    const file = path.join(tmp.dir, 'big.json');
    writeFileSync(file, Buffer.alloc(HEARTBEAT_MAX_BYTES + 1, 0x20));
    const r = await readHeartbeat(file);
    expect(r).toMatchObject({ ok: false, reason: 'oversized' });
  });

  it('reports a missing file and a directory in place of the file', async () => {
    expect(await readHeartbeat(path.join(tmp.dir, 'nope.json'))).toMatchObject({ ok: false, reason: 'missing' });
    const dir = path.join(tmp.dir, 'a-dir');
    mkdirSync(dir);
    expect(await readHeartbeat(dir)).toMatchObject({ ok: false, reason: 'unreadable' });
  });
});
