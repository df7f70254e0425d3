/** The CFS transport aborted mid-call: during the retry delay or while a body trickles in, the call ends at once. */
import { failure } from '../helpers/cfs-failure';
import { json, trickle, client, requests, server, useHostileServer } from './hostile-server';

useHostileServer();

describe('cancellation', () => {
  it('an abort during the retry delay ends the call at once, with no further attempt', async () => {
    const ac = new AbortController();
    server.on('GET /v3/options', json(503, { title: 'busy' }, { 'Retry-After': '60' }));
    const c = client({
      retryBudgetMs: 60_000,
      onRequest: (r) => {
        requests.push(r);
        setImmediate(() => ac.abort()); // the transport is waiting out the (5 s) delay by then
      },
    });
    const err = await failure(c.getOptions({ signal: ac.signal }));
    expect(err).toMatchObject({ kind: 'aborted', notSent: false });
    expect(err.message).toMatch(/^request aborted: GET /);
    expect(server.seen).toEqual(['GET /v3/options']);
    expect(requests.map((r) => r.status)).toEqual(['503']);
  });

  it('an abort while the body trickles in ends the attempt as aborted, not a timeout, and is not retried', async () => {
    const ac = new AbortController();
    server.on('GET /v3/options', (req, res) => {
      trickle(req, res, '');
      ac.abort();
    });
    const err = await failure(client({ requestTimeoutMs: 60_000 }).getOptions({ signal: ac.signal }));
    expect(err.kind).toBe('aborted');
    expect(server.seen).toHaveLength(1);
  });
});
