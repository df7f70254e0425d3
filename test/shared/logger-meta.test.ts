/**
 * Meta that tries to break the logger (Errors, cycles, BigInt, throwing getters and toJSON, Proxies, deep nesting,
 * __proto__): the line is still written and the caller never sees an exception.
 */
import { captureLogLines, last, lines, log, type Line } from './log-capture';

captureLogLines();

describe('meta that tries to break it', () => {
  it('an Error in meta keeps its message, stack, code and cause (JSON.stringify alone gives {})', () => {
    const err = Object.assign(new Error('outer', { cause: new TypeError('inner') }), { code: 'ECONNRESET' });
    log.error('Call failed', { err });
    const e = last().err as Line;
    expect(e).toMatchObject({ message: 'outer', code: 'ECONNRESET' });
    expect(e.stack).toContain('Error: outer');
    expect(e.cause).toMatchObject({ message: 'inner' });
    expect((e.cause as Line).stack).toContain('TypeError: inner');
  });

  it("an Error's object fields stay out (an AxiosError's config carries the token)", () => {
    const err = Object.assign(new Error('401'), { config: { headers: { Authorization: 'Bearer secret' } } });
    log.error('Call failed', { err });
    expect(lines[0]!.line).not.toContain('secret');
  });

  it('an Error passed as the meta itself: message appended and stack kept, as winston did', () => {
    log.error('Failed:', new Error('boom') as unknown as Record<string, unknown>);
    expect(last()).toMatchObject({ message: 'Failed: boom' });
    expect(last().stack).toContain('Error: boom');
  });

  it('a cycle is "[Circular]"; an object seen twice without a cycle is written twice', () => {
    const a: Line = { name: 'a' };
    a.self = a;
    const shared = { k: 1 };
    log.info('Cycle', { a, list: [a, shared, shared] });
    expect(last().a).toEqual({ name: 'a', self: '[Circular]' });
    expect(last().list).toEqual([{ name: 'a', self: '[Circular]' }, { k: 1 }, { k: 1 }]);
  });

  it('BigInt as a string; NaN as null; undefined, functions and symbols left out', () => {
    log.info('Values', {
      big: 12345678901234567890n,
      nested: { n: -1n },
      nan: NaN,
      u: undefined,
      f: () => 1,
      s: Symbol('s'),
      arr: [1n, undefined, () => 2],
      date: new Date(0),
    });
    expect(last()).toMatchObject({
      big: '12345678901234567890',
      nested: { n: '-1' },
      nan: null,
      arr: ['1', null, null],
      date: '1970-01-01T00:00:00.000Z',
    });
    expect(last()).not.toHaveProperty('u');
    expect(last()).not.toHaveProperty('f');
    expect(last()).not.toHaveProperty('s');
  });

  it('a getter that throws is marked, the other fields kept', () => {
    const meta = {
      ok: 1,
      get bad(): number {
        throw new Error('no access');
      },
    };
    expect(() => log.info('Getter', meta)).not.toThrow();
    expect(last()).toMatchObject({ ok: 1, bad: '[unreadable: no access]', message: 'Getter' });
  });

  it('a toJSON that throws is marked', () => {
    const odd = {
      toJSON(): never {
        throw new Error('nope');
      },
    };
    log.info('toJSON', { odd });
    expect(last().odd).toBe('[unreadable: nope]');
  });

  it('a Proxy whose keys cannot be listed gives a line with the message and log_error', () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    expect(() => log.error('Hostile', hostile)).not.toThrow();
    expect(last()).toMatchObject({ level: 'ERROR', logger: 'test.logger', message: 'Hostile', pid: process.pid });
    expect(last().log_error).toContain('trap');
    expect(typeof last().timestamp).toBe('string');
  });

  it('a meta message whose toString throws gives the fallback line', () => {
    const evil = Object.create(null) as Record<string, unknown>;
    evil.toString = () => {
      throw new Error('toString');
    };
    expect(() => log.info(evil as unknown as string, { message: 'x' })).not.toThrow();
    expect(last().log_error).toContain('toString');
  });

  it('nesting deeper than any record is cut short instead of exhausting the stack', () => {
    let deep: Line = { leaf: true };
    for (let i = 0; i < 50_000; i++) deep = { deep };
    expect(() => log.info('Deep', { deep })).not.toThrow();
    expect(lines[0]!.line).toContain('"[Too deep]"');
    expect(last().message).toBe('Deep');
  });

  it('a __proto__ key is written as data, not as the prototype', () => {
    log.info('Proto', JSON.parse('{"__proto__":{"polluted":true}}') as Line);
    expect(lines[0]!.line).toContain('"__proto__":{"polluted":true}');
    expect(({} as Line).polluted).toBeUndefined();
  });
});
