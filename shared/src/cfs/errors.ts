/** The one error type a CFS call can end in. No caller ever sees a TypeError from a CFS answer. */
export type CfsErrorKind = 'unreachable' | 'timeout' | 'http' | 'invalid-response' | 'aborted';

export class CfsError extends Error {
  override name = 'CfsError';
  constructor(
    readonly kind: CfsErrorKind,
    message: string,
    readonly method: string,
    readonly url: string,
    readonly route: string,
    readonly status?: number,
    readonly body?: unknown,
    /** True when the request certainly never reached the server (safe to repeat a POST). */
    readonly notSent = false,
  ) {
    super(message);
  }

  /** Short label for metrics: the HTTP code, or the kind. */
  get statusLabel(): string {
    return this.kind === 'http' && this.status !== undefined ? String(this.status) : this.kind;
  }

  get isNotFound(): boolean {
    return this.kind === 'http' && this.status === 404;
  }
}

export function isCfsError(err: unknown): err is CfsError {
  return err instanceof CfsError;
}
