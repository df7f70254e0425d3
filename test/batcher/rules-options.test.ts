/** Reading CFS's options: defaults, missing keys, and invalid values rejected while the value in force is kept. */
import { DEFAULT_OPTIONS, parseOptions } from '@cfs-batcher/batcher';

describe('options', () => {
  it('uses the defaults and reports every missing option', () => {
    const p = parseOptions({});
    expect(p.options).toEqual(DEFAULT_OPTIONS);
    expect(Object.keys(p.missing).sort()).toEqual(Object.keys(DEFAULT_OPTIONS).sort());
    expect(p.problems).toEqual([]);
  });

  it('takes valid values and lists only the absent keys as missing', () => {
    const p = parseOptions({ batch_size: 5, batch_window: 0, batcher_disable: true, logging_level: 'debug' });
    expect(p.options).toMatchObject({ batch_size: 5, batch_window: 0, batcher_disable: true, logging_level: 'DEBUG' });
    expect(p.missing).not.toHaveProperty('batch_size');
    expect(p.missing).toHaveProperty('batcher_check_interval', 10);
  });

  it.each([
    ['batch_size', 0],
    ['batch_size', '25'],
    ['batch_size', 2.5],
    ['batcher_check_interval', 0],
    ['batch_window', -1],
    ['default_batcher_retry_policy', -1],
    ['batcher_max_backoff', null],
    ['batcher_disable', 'true'],
    ['batcher_pending_timeout', 0],
    ['logging_level', 'TRACE'],
  ])('rejects %s=%j and keeps the value in force', (name, value) => {
    const previous = { ...DEFAULT_OPTIONS, batch_size: 7, batcher_check_interval: 3 };
    const p = parseOptions({ ...previous, [name]: value }, previous);
    expect(p.problems).toHaveLength(1);
    expect(p.problems[0]!.option).toBe(name);
    expect(p.problems[0]!.message).toContain(name);
    expect(p.options).toEqual(previous);
    expect(p.missing).toEqual({});
  });

  it('keeps everything when the answer is not an object', () => {
    const previous = { ...DEFAULT_OPTIONS, batch_size: 9 };
    const p = parseOptions(null, previous);
    expect(p.options).toEqual(previous);
    expect(p.problems).toHaveLength(1);
  });
});
