/** Heartbeat files that cannot be read or parsed: reported at once, failed only once freshness runs out. */
import { Timeline, bad, healthyFor } from './helpers';

describe('unreadable heartbeat files', () => {
  it.each([
    ['not_json', 'heartbeat is not JSON (Unexpected end of JSON input)'],
    ['empty', 'heartbeat file is empty'],
    ['oversized', 'heartbeat is 99999 bytes (limit 65536)'],
    ['unreadable', 'cannot open /hb: EACCES'],
    ['invalid', 'heartbeat does not match format 1: sequence: expected number'],
  ] as const)('a %s file is reported, and fails only after the freshness limit', (reason, detail) => {
    const tl = new Timeline();
    const seq = healthyFor(tl, 70_000);
    tl.advance(1000);
    tl.write({ sequence: seq });
    tl.advance(1000);
    let v = tl.read(bad(reason, detail));
    expect(v).toMatchObject({ live: true, reason: 'ok' });
    expect(v.details.readProblem).toBe(`${reason}: ${detail}`);
    tl.advance(11_000);
    expect(tl.read(bad(reason, detail)).live).toBe(true);
    tl.advance(3000);
    v = tl.read(bad(reason, detail));
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_invalid' });
    expect(v.message).toContain(detail);
  });

  it('a vanished file fails as missing after the freshness limit; a good read recovers', () => {
    const tl = new Timeline();
    const seq = healthyFor(tl, 70_000);
    tl.advance(41_000);
    expect(tl.read(bad('missing')).reason).toBe('heartbeat_missing');
    tl.advance(1000);
    expect(tl.write({ sequence: seq + 1 }).reason).toBe('ok');
  });

  it('a file that never parsed fails as invalid after the startup grace', () => {
    const tl = new Timeline();
    tl.read(bad('not_json', 'garbage'));
    tl.advance(61_000);
    const v = tl.read(bad('not_json', 'garbage'));
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_invalid' });
    expect(v.message).toContain('garbage');
  });
});
