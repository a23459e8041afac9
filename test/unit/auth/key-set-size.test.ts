// The issuer's key set is read into memory before jose parses it: the read had a time limit
// (jwksTimeoutMs) and no size limit, so a key set URL that answered without end (a misrouted download, a
// hostile or broken issuer) made the gateway buffer everything that came within the timeout, hundreds of
// megabytes on a fast link, on every fetch. An answer past the bound is a failed fetch: the read stops
// there, the client is answered 503, it is not fetched again within jwksCooldownMs, and the log says why.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { parseConfig } from '../../../src/config/index.js';
import { authRefusal, bearer } from '../../helpers/authenticator.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken, type TestKey } from '../../helpers/tokens.js';

const CHUNK = Buffer.alloc(64 * 1024, 0x20); // JSON whitespace
/** What the endless answer sends at most (the test's bound): far past the gateway's 1 MiB. */
const ENDLESS_CAP = 48 * 1024 * 1024;

describe('a key set answer larger than the bound', () => {
  let key: TestKey;
  let server: http.Server;
  let base: string;
  let fetches = 0;
  /** Bytes the endless answer got out before the client stopped reading (or the cap). */
  let endlessSent = 0;
  let endlessDone: Promise<void> = Promise.resolve();

  before(async () => {
    key = await makeKey('big');
    server = http.createServer((req, res) => {
      fetches++;
      if (req.url === '/padded.json') {
        // A good key set, padded to 2 MiB: what the current code accepted whole.
        const body = JSON.stringify({ keys: [key.publicJwk], pad: 'x'.repeat(2 * 1024 * 1024) });
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }
      // No length, no end (until the cap): written as fast as the client reads.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"keys":[');
      endlessSent = 0;
      endlessDone = new Promise<void>((resolve) => {
        res.once('close', () => resolve());
        const pump = (): void => {
          while (endlessSent < ENDLESS_CAP && !res.destroyed) {
            endlessSent += CHUNK.length;
            if (!res.write(CHUNK)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end(']}');
        };
        pump();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const authenticator = (path: string, lines: string[]): Authenticator => {
    const config = parseConfig(
      {
        server: { host: '127.0.0.1' },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: `${base}${path}`, jwksCooldownMs: 60_000, jwksTimeoutMs: 30_000, tokenCache: { maxEntries: 0 } },
        tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
        upstreams: [{ name: 'u', transport: 'stdio', command: 'true', sandbox: 'none' }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      'inline',
    );
    const log = { warn: (o: object, msg: string) => void lines.push(`${msg} ${JSON.stringify(o)}`) };
    return new Authenticator(config.auth, [PUBLIC_URL], undefined, undefined, log);
  };

  it('a padded key set over 1 MiB is a failed fetch: 503, logged, not fetched again within the cooldown', async () => {
    const lines: string[] = [];
    const auth = authenticator('/padded.json', lines);
    const before = fetches;
    for (let i = 0; i < 3; i++) {
      const err = await authRefusal(auth.authenticate(bearer(await signToken(key, { aud: PUBLIC_URL }))));
      assert.equal(err.status, 503, `request ${i}: ${err.status} ${err.message}`);
    }
    assert.equal(fetches - before, 1, 'fetched again within the cooldown');
    assert.match(lines.join('\n'), /larger than 1048576 bytes/, `no log line says why: ${lines.join('\n')}`);
    assert.doesNotMatch(lines.join('\n'), /padded\.json/, 'the log line quotes the key set URL (it can carry credentials)');
  });

  it('an answer without end is read no further than the bound', async () => {
    const lines: string[] = [];
    const auth = authenticator('/endless.json', lines);
    const err = await authRefusal(auth.authenticate(bearer(await signToken(key, { aud: PUBLIC_URL }))));
    assert.equal(err.status, 503, err.message);
    await endlessDone;
    assert.ok(endlessSent < ENDLESS_CAP, `the whole ${endlessSent} bytes were read`);
    assert.match(lines.join('\n'), /larger than 1048576 bytes/);
  });
});
