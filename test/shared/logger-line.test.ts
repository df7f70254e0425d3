/**
 * The JSON-lines logger's line, the one admins grep: Python level names, sorted keys, pid, timestamp and meta; level
 * filtering and the CFS level vocabulary; errorMessage.
 */
import {
  CFS_LOG_LEVELS,
  errorMessage,
  getLogLevel,
  isCfsLogLevel,
  parseCfsLogLevel,
  setLogLevel,
} from '@cfs-batcher/shared';
import { captureLogLines, last, lines, log, parsed } from './log-capture';

captureLogLines();

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

it('errorMessage: an Error its message, a string itself, anything else as JSON', () => {
  expect(errorMessage(new Error('m'))).toBe('m');
  expect(errorMessage('s')).toBe('s');
  expect(errorMessage({ a: 1 })).toBe('{"a":1}');
});
