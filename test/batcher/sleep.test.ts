/** The loop's real sleep: an abort (SIGTERM) ends a wait at once and quietly, whatever is left of it. */
import { realSleep } from '@cfs-batcher/batcher';

it('resolves once its time has passed, a negative time at once', async () => {
  await expect(realSleep(1)).resolves.toBeUndefined();
  await expect(realSleep(-5)).resolves.toBeUndefined();
});

it('an abort during a long wait resolves it, without an error', async () => {
  const stop = new AbortController();
  const waiting = realSleep(600_000, stop.signal);
  stop.abort();
  await expect(waiting).resolves.toBeUndefined();
});

it('an abort with its own reason still resolves the wait', async () => {
  const stop = new AbortController();
  const waiting = realSleep(600_000, stop.signal);
  stop.abort(new Error('SIGTERM'));
  await expect(waiting).resolves.toBeUndefined();
});

it('a signal aborted before the wait resolves it at once', async () => {
  await expect(realSleep(600_000, AbortSignal.abort())).resolves.toBeUndefined();
});
