// User consent (user-oauth) end to end: the official SDK client (v1, URL-mode elicitation) → gateway
// (JWT auth) → a real authorization server (oauth2-mock-server: authorization code + PKCE, refresh) and
// an SDK upstream that verifies every bearer's issuer and audience and records who called. The test plays
// the user's browser: it takes the URL from the -32042, follows /oauth/start → /authorize → /oauth/callback,
// and the client's retry then reaches the upstream as that user.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { authorize, consent, consentUrlOf, hop, local, openLink, submit, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { modernPost } from '../helpers/modern-http.js';
import { PENDING_PER_USER } from '../../src/upstream/pending-records.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const VAULT_KEY = Buffer.alloc(32, 7).toString('base64');
const CALLS = 1000;
const IN_FLIGHT = 20;

describe('user consent: each user links their own account, and reaches the upstream as themselves', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const tokens: Record<string, string> = {};
  const clients: Record<string, Client> = {};
  const consentUrls: string[] = [];
  /** A loopback port nothing listens on: the authorization server of upstream "ledger". */
  let closedPort: number;

  before(async () => {
    closedPort = await freedPort();
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
    for (const sub of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'hank']) tokens[sub] = await signToken(key, { sub, expIn: 600 });
    gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        vault: { key: VAULT_KEY },
        upstreams: [
          // Discovery: the upstream's RFC 9728 metadata names the authorization server.
          { name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard', scope: 'tickets' } },
          // Configured endpoints; a skew longer than the tokens live: each is refreshed after half its life (see due()).
          {
            name: 'notes',
            transport: 'streamable-http',
            url: upstream.url.replace('/mcp', '/notes'),
            sharing: 'per-user',
            auth: { type: 'user-oauth', clientId: 'switchboard', authorizationEndpoint: as.authorizationEndpoint, tokenEndpoint: as.tokenEndpoint, refreshSkewMs: 3_600_000 },
          },
          // An authorization server that cannot be reached: its metadata cannot be read at /oauth/start.
          { name: 'ledger', transport: 'streamable-http', url: upstream.url.replace('/mcp', '/ledger'), sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard', authorizationServer: `http://127.0.0.1:${closedPort}` } },
        ],
        endpoints: [
          { path: '/mcp', upstreams: ['tickets'] },
          { path: '/notes', upstreams: ['notes'] },
          { path: '/ledger', upstreams: ['ledger'] },
        ],
      },
      { logLines },
    );
  });

  after(async () => {
    await Promise.all(Object.values(clients).map((c) => c.close().catch(() => {})));
    await gw?.close();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
  });

  const client = async (sub: string, path = '/mcp') => {
    const k = `${sub}${path}`;
    clients[k] ??= await urlClient(gw.base, tokens[sub]!, sub, path);
    return clients[k];
  };
  const whoami = (c: Client, sub: string) => c.callTool({ name: 'whoami', arguments: { claimed: sub } });
  const text = (r: Awaited<ReturnType<Client['callTool']>>) => (r.content as Array<{ text: string }>)[0]!.text;
  /** The call's -32042 and its consent URL. */
  const askedConsent = async (c: Client, sub: string): Promise<string> => {
    const err = await whoami(c, sub).then(
      (r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    const url = consentUrlOf(err);
    consentUrls.push(url);
    return url;
  };
  /** Time passing for sub's stored token of `upstream`: its refresh is due now (as at half its life). */
  const due = async (sub: string, upstreamName: string) => {
    const vault = gw.app.gateway.consent!.vault;
    const user = { issuer: ISSUER, subject: sub, tenant: 'acme' };
    const link = (await vault.loadLink(upstreamName, user))!;
    assert.ok(await vault.update(upstreamName, user, link, { ...link.tokens, renewAt: Date.now() - 1 }));
  };
  const links = async (sub: string) => {
    const res = await fetch(`${gw.base}/oauth/links`, { headers: { authorization: `Bearer ${tokens[sub]}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { links: Array<{ upstream: string; subject: string }> }).links;
  };

  it('acceptance: the SDK client gets -32042 with a URL; the user consents in the browser; the retry reaches the upstream as the user', async () => {
    const c = await client('alice');
    const url = await askedConsent(c, 'alice');
    assert.ok(url.startsWith(`${PUBLIC_URL}/oauth/start?flow=`), url);
    assert.equal(upstream.calls.get('alice'), undefined, 'nothing reached the upstream without consent');
    as.loginAs = 'alice';
    const { callback, cookie, authorizeUrl } = await authorize(gw.base, url);
    const q = new URL(authorizeUrl).searchParams;
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.equal(q.get('client_id'), 'switchboard');
    assert.equal(q.get('redirect_uri'), `${PUBLIC_URL}/oauth/callback/upstream/tickets`);
    assert.equal(q.get('resource'), upstream.url);
    const done = await hop(callback, cookie);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /linked to the gateway user &quot;alice&quot;/);
    assert.equal(as.codes.get('alice'), 1);
    assert.equal(text(await whoami(c, 'alice')), 'alice');
    assert.equal(upstream.calls.get('alice'), 1);
    assert.deepEqual((await links('alice')).map((l) => l.upstream), ['tickets']);
  });

  it(`users A and B each reach the upstream as themselves: ${CALLS} interleaved calls, 0 crossed`, async () => {
    const b = await client('bob');
    as.loginAs = 'bob';
    assert.equal((await consent(gw.base, await askedConsent(b, 'bob'))).status, 200);
    const a = await client('alice');
    const before = { alice: upstream.calls.get('alice') ?? 0, bob: upstream.calls.get('bob') ?? 0 };
    const wrong: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        const [sub, c] = i % 2 === 0 ? (['alice', a] as const) : (['bob', b] as const);
        const seen = text(await whoami(c, sub));
        if (seen !== sub) wrong.push(`${sub} seen as ${seen}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    assert.deepEqual(wrong, []);
    assert.equal(upstream.crossed, 0);
    assert.equal(upstream.calls.get('alice')! - before.alice, CALLS / 2);
    assert.equal(upstream.calls.get('bob')! - before.bob, CALLS / 2);
    assert.deepEqual(upstream.rejected, []);
    assert.deepEqual((await links('bob')).map((l) => l.subject), ['bob'], 'a user sees only their own links');
  });

  it('a forged flow, a replayed flow, a forged state, a replayed state and a state from another browser are all refused', async () => {
    const c = await client('carol');
    const url = await askedConsent(c, 'carol');
    // Forged flow: the signature does not match.
    const forged = url.replace(/flow=([^.]+)\.(.)/, (_m, id: string, ch: string) => `flow=${id}.${ch === 'A' ? 'B' : 'A'}`);
    assert.equal((await hop(local(forged, gw.base))).status, 400);
    // A state the gateway never issued.
    assert.equal((await hop(`${gw.base}/oauth/callback?code=x&state=${'A'.repeat(43)}`, 'swb_consent=x')).status, 400);
    // The flow works once; the state comes back from the browser that started it, once.
    as.loginAs = 'mallory';
    const first = await authorize(gw.base, url);
    assert.equal((await hop(local(url, gw.base))).status, 400, 'a flow is single-use');
    // The sign-in's own cookie (named after its state), holding another browser's binding.
    const elsewhere = await hop(first.callback, `${first.cookie!.split('=')[0]}=another-browser`);
    assert.equal(elsewhere.status, 400);
    assert.match(elsewhere.text, /another browser/);
    assert.equal((await hop(first.callback, first.cookie)).status, 400, 'the refused state is spent');
    // A state completed once cannot be replayed.
    as.loginAs = 'carol';
    const url2 = await askedConsent(c, 'carol');
    const second = await authorize(gw.base, url2);
    assert.equal((await hop(second.callback, second.cookie)).status, 200);
    const replay = await hop(second.callback, second.cookie);
    assert.equal(replay.status, 400);
    assert.equal(as.codes.get('mallory'), undefined, 'no refused state reached the token endpoint');
    assert.equal(text(await whoami(c, 'carol')), 'carol');
  });

  it('refresh: a token near expiry is refreshed (rotated refresh token kept) and the user stays themselves', async () => {
    const n = await client('alice', '/notes');
    as.loginAs = 'alice';
    assert.equal((await consent(gw.base, await askedConsent(n, 'alice'))).status, 200);
    const before = as.refreshes.get('alice') ?? 0;
    await due('alice', 'notes');
    assert.equal(text(await whoami(n, 'alice')), 'alice');
    assert.equal(text(await whoami(n, 'alice')), 'alice');
    // Once: the refreshed token, shorter-lived than the skew, is used until half its life (it was refreshed at every use).
    assert.equal((as.refreshes.get('alice') ?? 0) - before, 1, 'refreshed once');
    assert.deepEqual(as.refused, []);
  });

  it('a revoked grant (invalid_grant on refresh) asks for consent again, with the expired reason', async () => {
    const n = await client('alice', '/notes');
    as.revoke('alice');
    await due('alice', 'notes');
    const err = await whoami(n, 'alice').then(() => undefined, (e: unknown) => e as Error);
    assert.ok(consentUrlOf(err));
    // The SDK keeps only the elicitations of the error's data; the message says why.
    assert.match(err!.message, /consent for upstream "notes" has ended/);
    assert.deepEqual((await links('alice')).map((l) => l.upstream), ['tickets'], 'the dead link is gone, the other stays');
    // Consent again: the same session's next call works.
    as.loginAs = 'alice';
    assert.equal((await consent(gw.base, await askedConsent(n, 'alice'))).status, 200);
    assert.equal(text(await whoami(n, 'alice')), 'alice');
  });

  it('expired consent: a stored token past its expiry with no refresh token asks for consent again, and the link goes', async () => {
    const frank = { issuer: ISSUER, subject: 'frank', tenant: 'acme' };
    await gw.app.gateway.consent!.vault.save('tickets', frank, { accessToken: 'expired-token-of-frank', expiresAt: Date.now() - 1000 });
    assert.deepEqual((await links('frank')).map((l) => l.upstream), ['tickets']);
    const err = await whoami(await client('frank'), 'frank').then(() => undefined, (e: unknown) => e as Error);
    assert.ok(consentUrlOf(err));
    // The expired link was found (and removed) when the session started the user's instance; the call's
    // own attempt then finds no link: either message asks for consent.
    assert.match(err!.message, /consent for upstream "tickets" has ended|Upstream "tickets" acts with your own account/);
    assert.deepEqual(await links('frank'), []);
    assert.ok(!upstream.bearers.has('expired-token-of-frank'), 'an expired token is never sent');
  });

  it('revocation by the user: DELETE /oauth/links/<upstream> with their token; the next call asks for consent', async () => {
    const unauth = await fetch(`${gw.base}/oauth/links/tickets`, { method: 'DELETE' });
    assert.equal(unauth.status, 401);
    const del = await fetch(`${gw.base}/oauth/links/tickets`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.bob}` } });
    assert.equal(del.status, 204);
    assert.equal((await fetch(`${gw.base}/oauth/links/tickets`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.bob}` } })).status, 404);
    assert.deepEqual(await links('bob'), []);
    const b = await client('bob');
    as.loginAs = 'bob';
    assert.equal((await consent(gw.base, await askedConsent(b, 'bob'))).status, 200);
    assert.equal(text(await whoami(b, 'bob')), 'bob', 'relinked, in the same session');
    // Alice is untouched.
    assert.equal(text(await whoami(await client('alice'), 'alice')), 'alice');
  });

  it("relinking another account: the user's instance reconnects as it, never through the upstream session the old account opened", async () => {
    const b = await client('bob');
    assert.equal(text(await whoami(b, 'bob')), 'bob');
    const crossed = upstream.crossed;
    assert.equal((await fetch(`${gw.base}/oauth/links/tickets`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.bob}` } })).status, 204);
    as.loginAs = 'bob-personal';
    assert.equal((await consent(gw.base, await askedConsent(b, 'bob-personal'))).status, 200);
    // The call that finds the new consent waits for the instance to reconnect as the new account.
    assert.equal(text(await whoami(b, 'bob-personal')), 'bob-personal');
    assert.equal(upstream.crossed, crossed, "no call went through the old account's upstream session");
    assert.equal(text(await whoami(b, 'bob-personal')), 'bob-personal');
  });

  it('2026-07-28: a modern client gets input_required with a URL elicitation; after consent its retry completes as the user', async () => {
    const caps = { elicitation: { url: {} } };
    const params = { name: 'whoami', arguments: { claimed: 'dave' } };
    const first = await modernPost(gw.url('/mcp'), 'tools/call', params, { token: tokens.dave!, caps });
    assert.equal(first.body.result?.resultType, 'input_required', JSON.stringify(first.body));
    const [key, ask] = Object.entries(first.body.result.inputRequests as Record<string, { method: string; params: { mode: string; url: string } }>)[0]!;
    assert.deepEqual([ask.method, ask.params.mode], ['elicitation/create', 'url']);
    assert.ok(ask.params.url.startsWith(`${PUBLIC_URL}/oauth/start?flow=`), ask.params.url);
    consentUrls.push(ask.params.url);
    as.loginAs = 'dave';
    assert.equal((await consent(gw.base, ask.params.url)).status, 200);
    const done = await modernPost(gw.url('/mcp'), 'tools/call', { ...params, inputResponses: { [key]: { action: 'accept' } }, requestState: first.body.result.requestState }, { token: tokens.dave!, caps });
    assert.equal(done.body.result?.resultType, 'complete', JSON.stringify(done.body));
    assert.equal(done.body.result.content[0].text, 'dave');
    // Without URL-mode elicitation declared, the client is told which capability is missing.
    const noUrl = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'whoami', arguments: { claimed: 'erin' } }, { token: tokens.erin!, caps: { elicitation: { form: {} } } });
    assert.deepEqual([noUrl.status, noUrl.body.error?.code], [400, -32021], JSON.stringify(noUrl.body));
    assert.deepEqual(noUrl.body.error.data.requiredCapabilities, { elicitation: { url: {} } });
    assert.equal(upstream.calls.get('erin'), undefined);
    // A method that cannot answer input_required (a list) is told with an error this era has (never -32042,
    // which it does not define), still naming the consent link.
    const list = await modernPost(gw.url('/mcp'), 'tools/list', {}, { token: tokens.frank!, caps });
    assert.equal(list.body.error?.code, -32000, JSON.stringify(list.body));
    assert.equal(list.body.error.data.code, 'SWB_UPSTREAM_CONSENT_REQUIRED');
    assert.ok(String(list.body.error.data.elicitations?.[0]?.url).startsWith(`${PUBLIC_URL}/oauth/start?flow=`), JSON.stringify(list.body.error.data));
  });

  // Each call without consent makes a consent link; kept in memory, they were bounded by dropping the
  // oldest of anyone's, so one user's loop pushed out every other user's pending link.
  it(`a user whose calls ask for consent without end is told, past ${PENDING_PER_USER} pending links, to open one they were given; once they do, the next call works`, async () => {
    const c = await client('gina');
    const first = await askedConsent(c, 'gina');
    // The session's start may have asked once already: the cap comes at the latest after as many calls.
    let capped: (Error & { code: number }) | undefined;
    for (let i = 1; i <= PENDING_PER_USER && !capped; i++) {
      const err = await whoami(c, 'gina').then(() => assert.fail('a call without consent succeeded'), (e: unknown) => e as Error & { code: number });
      if (err.code === -32042) consentUrls.push(consentUrlOf(err));
      else capped = err;
    }
    assert.match(String(capped?.message), new RegExp(`${PENDING_PER_USER} consent links pending.*open one of the links you were given`));
    assert.equal(capped?.code, -32000);
    assert.ok(!logLines.some((l) => l.includes('upstream failed to start')), 'waiting for the user is no failure to log');
    as.loginAs = 'gina';
    assert.equal((await consent(gw.base, first)).status, 200);
    assert.equal(text(await whoami(c, 'gina')), 'gina', 'the call after consent works at once (no timed restart to wait for)');
  });

  it('a consent link whose authorization server cannot be reached answers 502 with a page saying so, logged and counted', async () => {
    const url = await askedConsent(await client('hank', '/ledger'), 'hank');
    // The page is shown without the authorization server; its confirmation is what needs it.
    const shown = await openLink(gw.base, url);
    assert.equal(shown.status, 200, shown.text);
    const res = await submit(gw.base, shown);
    assert.equal(res.status, 502, res.text);
    assert.match(res.text, /^<!doctype html>/);
    assert.match(res.text, /authorization server of upstream &quot;ledger&quot; could not be reached/);
    assert.match(res.text, /retry the call in your client for a new link/);
    assert.equal(res.cookie, undefined, 'no consent cookie');
    assert.ok(logLines.some((l) => l.includes('"level":40') && l.includes('the authorization server could not be reached')), 'logged at warn');
    assert.match(await (await fetch(gw.app.metricsUrl!)).text(), /^switchboard_consent_unavailable_total\{reason="authorization-server"\} 1$/m);
  });

  it('no token, code or consent link appears in a log line or in /metrics', async () => {
    const metrics = await (await fetch(gw.app.metricsUrl!)).text();
    const secrets = [...as.issued, ...upstream.bearers, ...Object.values(tokens), ...consentUrls.map((u) => new URL(u).searchParams.get('flow')!)];
    assert.ok(secrets.length > 10 && logLines.length > 0);
    for (const s of secrets) {
      assert.ok(!logLines.some((l) => l.includes(s)), `a secret in a log line: ${logLines.find((l) => l.includes(s))}`);
      assert.ok(!metrics.includes(s), 'a secret in /metrics');
    }
    for (const t of Object.values(tokens)) assert.ok(!upstream.bearers.has(t), 'a client token was sent upstream');
  });
});

/** A loopback port that was free a moment ago and that nothing listens on now. */
function freedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
