/**
 * The JSON-lines logger: the line admins grep (Python level names, sorted keys, pid, timestamp, trace ids), level
 * filtering, sinks and silence, and meta that tries to break it (cycles, BigInt, Errors, throwing getters, Proxies):
 * the caller never sees an exception.
 */
import { INVALID_SPAN_CONTEXT, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import {
  CFS_LOG_LEVELS,
  addLogSink,
  errorMessage,
  getLogger,
  getLogLevel,
  isCfsLogLevel,
  parseCfsLogLevel,
  setLogLevel,
  setLogSilent,
} from '@cfs-batcher/shared';

type Line = Record<string, unknown>;

let lines: { line: string; record: Line }[] = [];
let stop: () => void = () => undefined;
const log = getLogger('test.logger');
/** The parsed lines, as an admin (or a test reading a program's stdout) sees them. */
const parsed = (): Line[] => lines.map((l) => JSON.parse(l.line) as Line);
const last = (): Line => parsed().at(-1)!;

beforeEach(() => {
  setLogSilent(true);
  setLogLevel('INFO');
  lines = [];
  stop = addLogSink((line, record) => lines.push({ line, record }));
});
afterEach(() => {
  stop();
  setLogSilent(false);
  setLogLevel('INFO');
  jest.restoreAllMocks();
});

describe('the line', () => {
  it('is one sorted JSON object with the Python level name, logger, message, pid, ISO timestamp and the meta', () => {
    log.warn('Something odd', { zeta: 1, alpha: 'a', nested: { b: 2, a: 1 } });
    const { line, record } = lines[0]!;
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(record);
    expect(Object.keys(record)).toEqual(['alpha', 'level', 'logger', 'message', 'nested', 'pid', 'timestamp', 'zeta']);
    expect(line).toContain('"nested":{"a":1,"b":2}');
    expect(line).toContain('"level":"WARNING"');
    expect(record).toMatchObject({
      level: 'WARNING',
      logger: 'test.logger',
      message: 'Something odd',
      pid: process.pid,
    });
    expect(new Date(record.timestamp as string).toISOString()).toBe(record.timestamp);
  });

  it.each([
    ['debug', 'DEBUG'],
    ['info', 'INFO'],
    ['warn', 'WARNING'],
    ['error', 'ERROR'],
  ] as const)('%s() writes level %s', (method, level) => {
    setLogLevel('DEBUG');
    log[method]('x');
    expect(last().level).toBe(level);
  });

  it('meta cannot change the level; a meta message is appended as winston did', () => {
    log.info('Base', { level: 'ERROR', message: 'more' });
    expect(last()).toMatchObject({ level: 'INFO', message: 'Base more' });
    log.info('Base', { message: { not: 'a string' } });
    expect(last().message).toBe('Base {"not":"a string"}');
  });
});

describe('levels', () => {
  it('setLogLevel filters below it; getLogLevel and isDebugEnabled follow', () => {
    setLogLevel('WARNING');
    expect(getLogLevel()).toBe('WARNING');
    expect(log.isDebugEnabled()).toBe(false);
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(parsed().map((l) => l.message)).toEqual(['w', 'e']);

    setLogLevel('DEBUG');
    expect(log.isDebugEnabled()).toBe(true);
    log.debug('d2');
    expect(last()).toMatchObject({ level: 'DEBUG', message: 'd2' });

    setLogLevel('ERROR');
    log.warn('w2');
    log.error('e2');
    expect(parsed().map((l) => l.message)).toEqual(['w', 'e', 'd2', 'e2']);
  });

  it('the CFS level vocabulary: WARN and CRITICAL aliases, any case, a fallback for the rest', () => {
    expect(CFS_LOG_LEVELS).toEqual(['DEBUG', 'INFO', 'WARNING', 'ERROR']);
    expect(parseCfsLogLevel('warn')).toBe('WARNING');
    expect(parseCfsLogLevel('CRITICAL')).toBe('ERROR');
    expect(parseCfsLogLevel('debug')).toBe('DEBUG');
    expect(parseCfsLogLevel('verbose')).toBe('INFO');
    expect(parseCfsLogLevel('', 'ERROR')).toBe('ERROR');
    expect(parseCfsLogLevel(undefined, 'WARNING')).toBe('WARNING');
    expect(isCfsLogLevel('info')).toBe(true);
    expect(isCfsLogLevel('WARN')).toBe(false);
    expect(isCfsLogLevel(3)).toBe(false);
  });
});

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

describe('sinks, silence and stdout', () => {
  it('stdout gets each line once with a newline unless silent; sinks get it either way', () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    log.info('Quiet');
    expect(write).not.toHaveBeenCalled();
    setLogSilent(false);
    log.info('Loud', { n: 1 });
    expect(write).toHaveBeenCalledTimes(1);
    expect(write.mock.calls[0]![0]).toBe(`${lines[1]!.line}\n`);
    expect(parsed().map((l) => l.message)).toEqual(['Quiet', 'Loud']);
  });

  it('a stdout that throws and a sink that throws reach neither the caller nor the other sinks', () => {
    setLogSilent(false);
    jest.spyOn(process.stdout, 'write').mockImplementation(() => {
      throw new Error('EPIPE');
    });
    const stopBad = addLogSink(() => {
      throw new Error('sink broke');
    });
    const seen: string[] = [];
    const stopGood = addLogSink((_line, record) => seen.push(record.message as string));
    expect(() => log.error('Still here')).not.toThrow();
    expect(seen).toEqual(['Still here']);
    stopBad();
    stopGood();
    stopGood();
    log.info('After');
    expect(seen).toEqual(['Still here']);
  });
});

describe('the winston pipeline', () => {
  it('after a stdout write that threw, the next line still reaches stdout (the transport is not left waiting)', () => {
    setLogSilent(false);
    const write = jest.spyOn(process.stdout, 'write').mockImplementationOnce(() => {
      throw new Error('ENOSPC');
    });
    write.mockImplementation(() => true);
    log.info('Lost');
    log.info('Next');
    log.info('And the next');
    expect(write).toHaveBeenCalledTimes(3);
    expect(String(write.mock.calls[2]![0])).toContain('"message":"And the next"');
    expect(parsed().map((l) => l.message)).toEqual(['Lost', 'Next', 'And the next']);
  });

  it('a line below the level is not built: its meta is never read', () => {
    let reads = 0;
    const meta = {
      get costly(): number {
        reads += 1;
        return 1;
      },
    };
    log.debug('Filtered', meta);
    expect(reads).toBe(0);
    expect(lines).toHaveLength(0);
    setLogLevel('DEBUG');
    log.debug('Kept', meta);
    expect(reads).toBe(1);
    expect(last()).toMatchObject({ message: 'Kept', costly: 1 });
  });

  it('a sink removed and another added later gets only its own lines', () => {
    stop();
    log.info('Nobody');
    const seen: string[] = [];
    const stopSeen = addLogSink((_line, record) => seen.push(record.message as string));
    log.info('Somebody');
    stopSeen();
    expect(seen).toEqual(['Somebody']);
    expect(lines).toHaveLength(0);
  });
});

describe('trace context', () => {
  const provider = new BasicTracerProvider();
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  it('inside an active span the line carries its trace_id and span_id; outside it does not', async () => {
    const tracer = trace.getTracer('logger-test');
    let ids: { traceId: string; spanId: string } | undefined;
    await tracer.startActiveSpan('work', async (span) => {
      ids = span.spanContext();
      await Promise.resolve();
      log.info('Inside');
      span.end();
    });
    log.info('Outside');
    const [inside, outside] = parsed();
    expect(inside).toMatchObject({ trace_id: ids!.traceId, span_id: ids!.spanId });
    expect(inside!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(outside).not.toHaveProperty('trace_id');
    expect(outside).not.toHaveProperty('span_id');
  });

  it('an invalid span context gives no ids', () => {
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(INVALID_SPAN_CONTEXT)), () =>
      log.info('Invalid'),
    );
    expect(last()).not.toHaveProperty('trace_id');
  });
});

it('errorMessage: an Error its message, a string itself, anything else as JSON', () => {
  expect(errorMessage(new Error('m'))).toBe('m');
  expect(errorMessage('s')).toBe('s');
  expect(errorMessage({ a: 1 })).toBe('{"a":1}');
});
