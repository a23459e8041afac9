// Token endpoints (and authorization server metadata) that send their answer's headers, then its body a
// byte at a time, each byte well within undici's idle bound: the whole body has a deadline (http.bodyTimeoutMs,
// 300 ms here), past which the token request fails with a coded error saying so. Without it the request hung
// for good, and with it every call waiting for that token. Real HTTP on a loopback port throughout.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { GatewayError } from '../../../src/errors.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';
import { SubjectTokens } from '../../../src/upstream/subject-tokens.js';
import { TokenExchange, TokenExchangeClient } from '../../../src/upstream/token-exchange.js';
import { UserOAuthClient } from '../../../src/upstream/user-oauth-client.js';

const WITHIN_MS = 300;
/** Ends a test that would otherwise hang for good (the defect), naming what it waited for. */
const GUARD = { timeout: 15_000 };
const ALICE = { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme' };

describe('a token endpoint that trickles its answer for ever', () => {
  let server: Server;
  let url: string;
  let requests = 0;
  const drips = new Set<NodeJS.Timeout>();
  const agent = new Agent({ bodyTimeout: 60_000 });
  before(async () => {
    server = createServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"access_token": "t", "token_type": "Bearer", "expires_in": 3600');
        // A space every 20 ms: never idle for long, never done.
        const drip = setInterval(() => res.write(' '), 20);
        drips.add(drip);
        res.on('close', () => (clearInterval(drip), drips.delete(drip)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const d of drips) clearInterval(d);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await agent.close();
  });

  const failure = (p: Promise<unknown>) => p.then((v) => assert.fail(`expected a failure, got ${String(v)}`), (e: unknown) => e as GatewayError);
  const cut = new RegExp(`within ${WITHIN_MS} ms \\(http\\.bodyTimeoutMs\\)`);

  it('client credentials: the token request fails, and so does every call waiting for it; the next call asks again', GUARD, async () => {
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: `${url}/token`, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, WITHIN_MS);
    const before = requests;
    const [a, b] = await Promise.all([failure(cc.token()), failure(cc.token())]);
    assert.match(a.message, cut);
    assert.equal(b, a, 'the waiters share the one fetch and its failure');
    assert.equal(requests - before, 1);
    assert.match((await failure(cc.token())).message, cut);
    assert.equal(requests - before, 2, 'a failed fetch is not kept');
  });

  it('token exchange: SWB_UPSTREAM_UNAVAILABLE, saying the answer was not read in time', GUARD, async () => {
    const subjects = new SubjectTokens();
    const jwt = (claims: object) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.x`;
    subjects.remember(ALICE, `Bearer ${jwt({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 })}`);
    for (const actorToken of [false, true]) {
      const settings = { type: 'token-exchange', tokenEndpoint: `${url}/token`, clientId: 'gw', clientSecret: 's', audience: 'u', actorToken, refreshSkewMs: 60_000 } as never;
      const exchange = new TokenExchange(new TokenExchangeClient('u', settings, agent, WITHIN_MS), { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent);
      const err = await failure(exchange.token());
      assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message);
      assert.match(err.message, cut, `actorToken: ${actorToken}`);
    }
  });

  it('user-oauth: a redeem and a refresh fail SWB_UPSTREAM_UNAVAILABLE (the link is not in question)', GUARD, async () => {
    const settings = { type: 'user-oauth', clientId: 'gw', clientSecret: 's', authorizationEndpoint: `${url}/authorize`, tokenEndpoint: `${url}/token`, refreshSkewMs: 60_000 } as never;
    const client = new UserOAuthClient({ name: 'u', url: `${url}/mcp` }, settings, agent, WITHIN_MS);
    for (const attempt of [() => client.redeem('code', 'verifier', 'https://gw.test/oauth/callback'), () => client.refresh('rt-1')]) {
      const err = await failure(attempt());
      assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message);
      assert.match(err.message, cut);
    }
  });

  it('user-oauth discovery: metadata that trickles is given up on, and the consent fails SWB_UPSTREAM_UNAVAILABLE', GUARD, async () => {
    const settings = { type: 'user-oauth', clientId: 'gw', authorizationServer: url, refreshSkewMs: 60_000 } as never;
    const client = new UserOAuthClient({ name: 'u', url: `${url}/mcp` }, settings, agent, WITHIN_MS);
    const err = await failure(client.authorizeUrl({ state: 's', challenge: 'c', redirectUri: 'https://gw.test/oauth/callback' }));
    assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message);
  });
});

describe('a token endpoint whose answer is over 64 KiB (found by a review)', () => {
  // The answer is read up to 64 KiB (a token response is small; a larger body is not held). One over it was
  // cut there without a word, and the cut text misread (here: as JSON with a syntax error).
  let server: Server;
  let url: string;
  const agent = new Agent();
  /** A token response padded (inside a field before access_token) to `bytes` bytes in all. */
  const answer = (bytes: number) => {
    const shell = '{"padding":"","access_token":"t","token_type":"Bearer","expires_in":3600}';
    return shell.replace('"padding":""', `"padding":"${'x'.repeat(bytes - shell.length)}"`);
  };
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer(Number(new URL(req.url!, 'http://x').searchParams.get('bytes')))));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await agent.close();
  });

  const credentials = (bytes: number) => new ClientCredentials({ type: 'client-credentials', tokenUrl: `${url}/token?bytes=${bytes}`, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 5000);

  it('fails saying the answer is too large, not as whatever its first 64 KiB read as', GUARD, async () => {
    const err = await credentials(64 * 1024 + 1).token().then((v) => assert.fail(`expected a failure, got ${v}`), (e: unknown) => e as Error);
    assert.match(err.message, /the token endpoint's answer \(HTTP 200\): more than 65536 bytes, too large for such an answer/);
  });

  it('reads an answer of exactly 64 KiB', GUARD, async () => {
    assert.equal(await credentials(64 * 1024).token(), 't');
  });
});
