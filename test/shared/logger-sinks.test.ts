/**
 * Where the logger's lines go: stdout unless silent, every sink either way; a stdout or a sink that throws reaches
 * neither the caller nor the other sinks, and the winston pipeline keeps going after a failed write.
 */
import { addLogSink, setLogLevel, setLogSilent } from '@cfs-batcher/shared';
import { captureLogLines, last, lines, log, parsed, stop } from './log-capture';

captureLogLines();

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
