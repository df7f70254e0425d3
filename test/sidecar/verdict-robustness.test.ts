/** Random sequences of reads and CFS answers: every verdict has a known reason and a sentence for the admin. */
import fc from 'fast-check';
import { REASONS } from '@cfs-batcher/sidecar-health';
import { Timeline, bad, heartbeat, ok } from './helpers';

describe('robustness', () => {
  it('any sequence of reads and CFS answers yields a known reason and an admin sentence', () => {
    const readArb = fc.oneof(
      fc.record({
        seq: fc.integer({ min: 0, max: 50 }),
        inst: fc.constantFrom('a', 'b'),
        skew: fc.integer({ min: -100_000, max: 100_000 }),
        phase: fc.constantFrom<'sleep' | 'collect' | 'waiting_for_cfs' | 'starting'>(
          'sleep',
          'collect',
          'waiting_for_cfs',
          'starting',
        ),
      }),
      fc.constantFrom<'missing' | 'not_json' | 'oversized'>('missing', 'not_json', 'oversized'),
    );
    const step = fc.record({
      dt: fc.integer({ min: 0, max: 60_000 }),
      read: readArb,
      cfs: fc.option(fc.record({ ok: fc.boolean(), pendingComponents: fc.boolean() })),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const tl = new Timeline();
        for (const s of steps) {
          tl.advance(s.dt);
          if (s.cfs) tl.cfsSays({ ...s.cfs, activeSession: null });
          const v =
            typeof s.read === 'string'
              ? tl.read(bad(s.read))
              : tl.read(
                  ok(
                    heartbeat({
                      instance_id: s.read.inst,
                      sequence: s.read.seq,
                      written_at_ms: tl.now.wallMs + s.read.skew,
                      phase: s.read.phase,
                      phase_is_wait: s.read.phase === 'waiting_for_cfs',
                      phase_started_at_ms: tl.now.wallMs - 1000,
                    }),
                  ),
                );
          expect(REASONS).toContain(v.reason);
          expect(v.live).toBe(v.reason === 'ok' || v.reason === 'starting');
          expect(v.message.length).toBeGreaterThan(10);
        }
      }),
      { numRuns: 200 },
    );
  });
});
