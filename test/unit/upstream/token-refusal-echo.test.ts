// An authorization server's refusal is quoted to the user (token exchange) or to the log (a user-oauth grant):
// its `error` and `error_description`. A hostile or buggy one that echoes what it was sent there (the client's
// HTTP Basic credentials, decoded; the subject, actor or refresh token; the code and its verifier) had the
// gateway's client secret and the tokens written into the user's error and the operator's log.
// A real token endpoint on a loopback port echoes every secret of each request in its refusal.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { GatewayError } from '../../../src/errors.js';
import { SubjectTokens } from '../../../src/upstream/subject-tokens.js';
import { TokenExchange, TokenExchangeClient } from '../../../src/upstream/token-exchange.js';
import { UserOAuthClient } from '../../../src/upstream/user-oauth-client.js';

const SECRET = 'gateway-client-secret/with+chars';
const ACTOR = 'opaque-actor-token-0123456789';
const REFRESH = 'opaque-refresh-token-abcdef';
const CODE = 'opaque-code-9876543210';
const VERIFIER = 'verifier-0123456789-abcdefghij';
const ALICE = { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme' };
const jwt = (claims: object) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const SUBJECT = jwt({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 });

describe('a token endpoint that echoes what it was sent in its refusal', () => {
  let server: Server;
  let url: string;
  const agent = new Agent();

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') === 'client_credentials') {
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: ACTOR, token_type: 'Bearer', expires_in: 3600 }));
        }
        const pair = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /i, ''), 'base64').toString();
        const decoded = pair.split(':').map(decodeURIComponent).join(':');
        const echoed = [...form.values()].join(' ');
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `bad ${decoded.split(':')[1]}`, error_description: `client ${decoded} (${pair}) sent ${echoed}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await agent.close();
  });

  const failure = (p: Promise<unknown>) => p.then((v) => assert.fail(`expected a failure, got ${String(v)}`), (e: unknown) => e as GatewayError);
  const assertNoSecret = (text: string, what: string) => {
    for (const s of [SECRET, encodeURIComponent(SECRET), ACTOR, REFRESH, CODE, VERIFIER, SUBJECT, SUBJECT.slice(0, 40)]) assert.ok(!text.includes(s), `${what} quotes ${s}: ${text}`);
  };

  it("token exchange: the user's error says the refusal without the client secret, the subject or the actor token", async () => {
    const subjects = new SubjectTokens();
    subjects.remember(ALICE, `Bearer ${SUBJECT}`);
    const settings = { type: 'token-exchange', tokenEndpoint: `${url}/token`, clientId: 'gw', clientSecret: SECRET, audience: 'u', actorToken: true, refreshSkewMs: 60_000 } as never;
    const exchange = new TokenExchange(new TokenExchangeClient('u', settings, agent, 5000), { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent);
    const err = await failure(exchange.token());
    assert.equal(err.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED', err.message);
    assert.match(err.message, /refused to exchange your token .*\[redacted\]/);
    assertNoSecret(err.message, 'the message');
    assertNoSecret(JSON.stringify(err.details), 'the details');
  });

  it('user-oauth: a refused refresh or code grant carries neither the client secret nor the token, code or verifier', async () => {
    const settings = { type: 'user-oauth', clientId: 'gw', clientSecret: SECRET, authorizationEndpoint: `${url}/authorize`, tokenEndpoint: `${url}/token`, refreshSkewMs: 60_000 } as never;
    const client = new UserOAuthClient({ name: 'u', url: `${url}/mcp` }, settings, agent, 5000);
    for (const attempt of [() => client.refresh(REFRESH), () => client.redeem(CODE, VERIFIER, 'https://gw.test/oauth/callback')]) {
      const err = (await failure(attempt())) as unknown as { error: string; message: string };
      assert.match(err.message, /\[redacted\]/);
      assertNoSecret(err.message, 'the description');
      assertNoSecret(err.error, 'the error');
    }
  });
});
