// A key set fetch that failed was told to no one but the client (503, jose's words): the gateway's log
// had only `reason: jwks_unavailable` per refused request, so an operator whose auth.jwksUrl answered a
// redirect (which jose does not follow), a 404, a 5xx, a login page, or could not be reached at all saw
// every client turned away and not why. Each failed fetch (at most one per jwksCooldownMs) is now a warn
// line naming the HTTP status or the system error code, never the URL (it can carry credentials).
// Real HTTP on a real port, the Authenticator as the edge builds it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AuthError } from '../../../src/auth/auth-error.js';
import { cooledKeySetFetch } from '../../../src/auth/key-set-fetch.js';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { parseConfig } from '../../../src/config/index.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken, type TestKey } from '../../helpers/tokens.js';

const bearer = (t: string) => ({ authorization: [`Bearer ${t}`], tokenInQuery: false });

describe('a key set fetch that fails is logged', () => {
  let key: TestKey;
  let server: http.Server;
  let port: number;

  before(async () => {
    key = await makeKey('failing');
    server = http.createServer((req, res) => {
      if (req.url === '/moved.json') return void res.writeHead(301, { location: '/jwks/keys.json' }).end();
      if (req.url === '/login.json') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>');
      res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** The log lines of one refused token against `jwksUrl`, after checking it was answered 503. */
  async function linesFor(jwksUrl: string): Promise<string> {
    const lines: string[] = [];
    const config = parseConfig(
      {
        server: { host: '127.0.0.1' },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl, jwksCooldownMs: 60_000, tokenCache: { maxEntries: 0 } },
        tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
        upstreams: [{ name: 'u', transport: 'stdio', command: 'true', sandbox: 'none' }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      'inline',
    );
    const log = { warn: (o: object, msg: string) => void lines.push(`${msg} ${JSON.stringify(o)}`) };
    const auth = new Authenticator(config.auth, [PUBLIC_URL], undefined, undefined, log);
    for (let i = 0; i < 2; i++) {
      const err = await Promise.resolve(auth.authenticate(bearer(await signToken(key, { aud: PUBLIC_URL })))).then(
        () => assert.fail('the token was accepted'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof AuthError && err.status === 503, String(err));
    }
    const text = lines.join('\n');
    assert.equal(lines.length, 1, `one line per failed fetch (the second request is inside the cooldown): ${text}`);
    assert.doesNotMatch(text, /127\.0\.0\.1|\.json/, `the log line quotes the key set URL: ${text}`);
    return text;
  }

  const url = (path: string, p = port) => `http://127.0.0.1:${p}${path}`;

  it('a redirect, which is not followed, says so', async () => {
    const text = await linesFor(url('/moved.json'));
    assert.match(text, /HTTP 301/);
    assert.match(text, /redirect/);
  });

  it('an error status names it', async () => {
    assert.match(await linesFor(url('/down.json')), /HTTP 503/);
  });

  it('an answer that is no key set says so', async () => {
    assert.match(await linesFor(url('/login.json')), /not a JSON Web Key Set/);
  });

  it('an issuer that cannot be reached names the system error code', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const free = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    assert.match(await linesFor(url('/keys.json', free)), /ECONNREFUSED/);
  });
});

describe('a key set answer other than 200', () => {
  it("has its body let go, not left holding the connection until it is collected (jose reads only the status; found by a review)", async () => {
    let cancelled = false;
    const body = new ReadableStream({ pull: (c) => c.enqueue(new TextEncoder().encode('x'.repeat(1024))), cancel: () => void (cancelled = true) });
    const fetchImpl = async () => new Response(body, { status: 503 });
    const res = await cooledKeySetFetch(60_000, undefined, fetchImpl)('http://127.0.0.1:1/keys.json', { headers: new Headers(), method: 'GET', redirect: 'manual', signal: new AbortController().signal });
    assert.equal(res.status, 503, 'jose is still told the status');
    assert.equal(cancelled, true, 'the body was cancelled');
  });
});
