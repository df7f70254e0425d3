/** RFC 7807 problem documents, the way connexion.problem() shapes them. */
export interface ProblemBody {
  type: 'about:blank';
  title: string;
  detail: string;
  status: number;
}

export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(`${status} ${title}: ${detail}`);
  }

  static badRequest(detail: string, title = 'Bad Request'): ProblemError {
    return new ProblemError(400, title, detail);
  }

  body(): ProblemBody {
    return problemBody(this.status, this.title, this.detail);
  }
}

export function problemBody(status: number, title: string, detail: string): ProblemBody {
  return { type: 'about:blank', title, detail, status };
}
