/** The CFS transport over TLS: the server is verified against CA_CERT, refused without it, and keep-alive holds. */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { failure } from '../helpers/cfs-failure';
import { json, startHostile, client, useHostileServer } from './hostile-server';

useHostileServer();

describe('https', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cfs-tls-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
        .concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'])
        .concat(['-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'ca.pem')]),
      { stdio: 'ignore' },
    );
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('verifies the server against CA_CERT, and refuses it without', async () => {
    const [key, cert] = await Promise.all([
      fs.readFile(path.join(dir, 'key.pem')),
      fs.readFile(path.join(dir, 'ca.pem')),
    ]);
    const tls = await startHostile(https.createServer({ key, cert }));
    try {
      tls.on('GET /v3/options', json(200, { tls: true }));
      const c = client({ baseUrl: tls.baseUrl, caCertPath: path.join(dir, 'ca.pem') });
      await expect(c.getOptions()).resolves.toEqual({ tls: true });
      await expect(c.getOptions()).resolves.toEqual({ tls: true });
      expect(tls.connections).toHaveLength(1); // keep-alive over TLS too
      const err = await failure(client({ baseUrl: tls.baseUrl, retryBudgetMs: 0 }).getOptions());
      expect(err).toMatchObject({ kind: 'unreachable', notSent: false });
      expect(err.message).toMatch(/SELF_SIGNED/);
    } finally {
      await tls.close();
    }
  });
});
