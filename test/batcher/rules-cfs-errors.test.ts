/**
 * CFS errors: the original batcher's log line for each, the reason a failed create is counted under, and which failed
 * POSTs certainly created nothing.
 */
import { CREATE_FAILURE_REASONS, certainlyNotCreated, cfsErrorLine, createFailureReason } from '@cfs-batcher/batcher';
import { CfsError } from '@cfs-batcher/shared';

describe('CFS error lines', () => {
  const err = (kind: ConstructorParameters<typeof CfsError>[0], message: string, status?: number, notSent = false) =>
    new CfsError(kind, message, 'POST', 'http://x/v3/sessions', '/v3/sessions', status, undefined, notSent);

  it('maps each kind to the original line', () => {
    const table: [CfsError, string][] = [
      [err('unreachable', 'cannot reach'), 'Unable to connect to CFS: cannot reach'],
      [err('timeout', 'timeout'), 'Unable to connect to CFS: timeout'],
      [err('http', '503 from CFS', 503), 'Unexpected response from CFS: 503 from CFS'],
      [
        err('invalid-response', 'Non-JSON response from CFS for GET'),
        'Non-JSON response from CFS: Non-JSON response from CFS for GET',
      ],
      [err('invalid-response', 'Unexpected response: null'), 'Unexpected response from CFS: Unexpected response: null'],
    ];
    for (const [e, line] of table) expect(cfsErrorLine(e)).toBe(line);
  });

  it('gives every kind of failed create its own reason: auth, not-found and other client errors apart from 400', () => {
    const table: [CfsError, string][] = [
      [err('http', 'bad configuration', 400), 'http_400'],
      [err('http', 'token expired', 401), 'http_auth'],
      [err('http', 'wrong tenant', 403), 'http_auth'],
      [err('http', 'no /v3 in CFS_API_URL', 404), 'http_404'],
      [err('http', 'name clash', 409), 'http_409'],
      [err('http', 'unprocessable', 422), 'http_4xx'],
      [err('http', 'too many requests', 429), 'http_4xx'],
      [err('http', 'Kafka down', 503), 'http_5xx'],
      [err('timeout', 'timeout'), 'timeout'],
      [err('unreachable', 'ECONNREFUSED'), 'unreachable'],
      [err('invalid-response', 'Non-JSON'), 'invalid'],
    ];
    expect(table.map(([e]) => createFailureReason(e))).toEqual(table.map(([, r]) => r));
    // every reason the rule gives is one the metric declares (and exports at 0), and each is reachable
    expect(new Set(table.map(([, r]) => r))).toEqual(new Set(CREATE_FAILURE_REASONS));
  });

  it('knows which failed POSTs certainly created nothing', () => {
    expect(certainlyNotCreated(err('http', '', 400))).toBe(true);
    expect(certainlyNotCreated(err('http', '', 409))).toBe(false);
    expect(certainlyNotCreated(err('http', '', 503))).toBe(false);
    expect(certainlyNotCreated(err('timeout', ''))).toBe(false);
    expect(certainlyNotCreated(err('unreachable', '', undefined, true))).toBe(true);
  });
});
