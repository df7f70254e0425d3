/**
 * The CFS transport against answers that are not JSON 2xx (a redirect, a Problem or text body), and what it sends:
 * JSON with its length, a body split in many chunks read whole.
 */
import type http from 'node:http';
import { failure } from '../helpers/cfs-failure';
import { SESSION, json, client, server, useHostileServer } from './hostile-server';

useHostileServer();

describe('answers that are not JSON 2xx', () => {
  it('a redirect is not followed: an http error with its status', async () => {
    server.on('GET /v3/options', (_req, res) => res.writeHead(302, { Location: '/v3/elsewhere' }).end());
    const err = await failure(client().getOptions());
    expect(err).toMatchObject({ kind: 'http', status: 302, body: '' });
    expect(err.message).toMatch(/^302 from CFS for GET http:\/\/127\.0\.0\.1:\d+\/v3\/options$/);
    expect(server.seen).toEqual(['GET /v3/options']);
  });

  it('a 5xx with a Problem body carries the detail in the message; a text body is kept as text', async () => {
    server.on('POST /v3/sessions', json(500, { title: 'Internal', detail: 'Kafka is down' }));
    const err = await failure(client().createSession(SESSION));
    expect(err.message).toMatch(/^500 from CFS for POST .*\/v3\/sessions: Kafka is down$/);
    expect(err.body).toEqual({ title: 'Internal', detail: 'Kafka is down' });
    server.on('DELETE /v3/sessions/s1', (_req, res) => res.writeHead(404).end('gone'));
    const gone = await failure(client().deleteSession('s1'));
    expect(gone).toMatchObject({ kind: 'http', status: 404, body: 'gone' });
  });

  it('sends JSON with its length and Accept; parses a body split in many chunks', async () => {
    const big = { components: Array.from({ length: 300 }, (_, i) => ({ id: `x${i}-é€` })), next: null };
    let headers: http.IncomingHttpHeaders = {};
    let received = '';
    let query = '';
    server.on('POST /v3/sessions', (req, res, body) => {
      headers = req.headers;
      received = body;
      res.writeHead(201, { 'Content-Type': 'application/json' });
      const text = JSON.stringify({ name: 'batcher-x', é: 'ü' });
      for (let i = 0; i < text.length; i += 3) res.write(text.slice(i, i + 3));
      res.end();
    });
    server.on('GET /v3/components', (req, res) => {
      query = (req.url ?? '').split('?')[1] ?? '';
      const text = Buffer.from(JSON.stringify(big));
      res.writeHead(200);
      for (let i = 0; i < text.length; i += 7) res.write(text.subarray(i, i + 7)); // splits multi-byte chars too
      res.end();
    });
    await expect(client().createSession(SESSION)).resolves.toEqual({ name: 'batcher-x', é: 'ü' });
    expect(JSON.parse(received)).toEqual(SESSION);
    expect(headers).toMatchObject({
      accept: 'application/json',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(received)),
    });
    const page = await client().listAllComponents({ ids: ['a b', 'c:d'] });
    expect(page.components.map((c) => c.id)).toEqual(big.components.map((c) => c.id));
    expect(query).toBe('ids=a+b,c:d'); // the query encoding CFS always got from this client (commas as they are)
  });
});
