import { CfsError } from '@cfs-batcher/shared';

/** The CfsError a call must fail with (the test fails if it resolves or throws something else). */
export async function failure(p: Promise<unknown>): Promise<CfsError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CfsError);
    return err as CfsError;
  }
  throw new Error('expected the call to fail');
}
