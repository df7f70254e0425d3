/** The verdict's settings: parsing the phase budgets, and the documented defaults. */
import { parsePhaseBudgets, thresholdsFromEnv } from '@cfs-batcher/sidecar-health';
import { ConfigError } from '@cfs-batcher/shared';

describe('configuration', () => {
  it('parses phase budgets and rejects what cannot be right', () => {
    expect(parsePhaseBudgets('rebuild=300, send=5')).toEqual({ rebuild: 300_000, send: 5000 });
    expect(() => parsePhaseBudgets('rebuld=300')).toThrow(/unknown phase "rebuld"/);
    expect(() => parsePhaseBudgets('sleep=10')).toThrow(/takes no budget/);
    expect(() => parsePhaseBudgets('send')).toThrow(ConfigError);
    expect(() => thresholdsFromEnv({ SIDECAR_STARTUP_GRACE_SECONDS: 'ten' })).toThrow(/SIDECAR_STARTUP_GRACE_SECONDS/);
    expect(() => thresholdsFromEnv({ SIDECAR_PHASE_BUDGETS: 'send=0' })).toThrow(
      'SIDECAR_PHASE_BUDGETS="send=0": budget for send must be at least 1 s',
    );
  });

  it('documents its defaults', () => {
    const t = thresholdsFromEnv({});
    expect(t).toMatchObject({
      startupGraceMs: 60_000,
      progressDeadlineMs: null,
      progressIntervals: 6,
    });
    expect(t.phaseBudgetsMs).toMatchObject({
      rebuild: 300_000,
      options: 60_000,
      check_status: 120_000,
      collect: 180_000,
      send: 120_000,
    });
  });
});
