// Upstream tokens shorter-lived than the refresh skew are still cached (a real token endpoint on a
// loopback port counts the fetches): they were fetched again for every request.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import type { GatewayError } from '../../../src/errors.js';
import { renewAt } from '../../../src/upstream/bearer-source.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';
import { SubjectTokens } from '../../../src/upstream/subject-tokens.js';
import { TokenExchange, TokenExchangeClient } from '../../../src/upstream/token-exchange.js';
import { UserOAuthClient } from '../../../src/upstream/user-oauth-client.js';
import { MemoryVaultStore } from '../../../src/upstream/vault-store.js';
import { ALICE, consentRig, startTokenEndpoint, type Rig, type TokenEndpoint } from '../../helpers/refresh-rig.js';
import { withClockAhead } from '../../helpers/wait.js';

/**
 * A token source whose renewal fails (HTTP 503) while the token held is still valid: it keeps that token,
 * tries again at most every 5 s, and fails once the token has expired (60 s), until the endpoint is back.
 * `dueMs`: when the token is due (its life less the skew); `next`: the token fetched after the outage.
 */
async function keptThroughOutage(o: { token: () => Promise<string>; held: string; next: string; dueMs: number; warned: string[]; fetches: () => number; down: (on: boolean) => void }): Promise<void> {
  assert.equal(await o.token(), o.held);
  o.down(true);
  try {
    await withClockAhead(o.dueMs + 5_000, async () => {
      assert.equal(await o.token(), o.held);
      assert.equal(await o.token(), o.held);
    });
    assert.equal(o.fetches(), 2, 'one failed renewal, not one per request');
    assert.equal(o.warned.length, 1);
    assert.match(o.warned[0]!, /HTTP 503/);
    await withClockAhead(o.dueMs + 11_000, async () => assert.equal(await o.token(), o.held));
    assert.equal(o.fetches(), 3, 'tried again 5 s later');
    await withClockAhead(61_000, () => assert.rejects(o.token(), /HTTP 503/));
    o.down(false);
    await withClockAhead(61_000, async () => assert.equal(await o.token(), o.next));
  } finally {
    o.down(false);
  }
}

describe('renewAt', () => {
  it('renews skewMs before expiry, never earlier than half the life, and keeps no expired token', () => {
    assert.equal(renewAt(1000, 3_600_000, 60_000), 1000 + 3_540_000);
    assert.equal(renewAt(1000, 60_000, 60_000), 1000 + 30_000);
    assert.equal(renewAt(1000, 10_000, 60_000), 1000 + 5_000);
    assert.equal(renewAt(1000, 0, 60_000), 1000);
    assert.ok(renewAt(1000, -5_000, 60_000) <= 1000);
  });
});

describe('ClientCredentials against a token endpoint', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  let expiresIn: unknown = 60;
  /** What the endpoint answers instead of a fresh bearer token. */
  let answer: Record<string, unknown> | undefined;
  /** Its HTTP status (503: down). */
  let status = 200;
  const agent = new Agent();
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        fetches++;
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer ?? { access_token: `t${fetches}`, token_type: 'Bearer', expires_in: expiresIn }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a token living exactly the skew (60 s, the default) is fetched once for several requests', async () => {
    fetches = 0;
    expiresIn = 60;
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
    const tokens = [await cc.token(), await cc.token(), await cc.token()];
    assert.deepEqual(tokens, ['t1', 't1', 't1']);
    assert.equal(fetches, 1);
  });

  // expires_in 0 or below, unreadable, or a tiny fraction of a second: the token was fetched again for
  // every request to the upstream. Each is kept for the floor (30 s, renewed after half of it).
  for (const [what, value] of [['0', 0], ['-30', -30], ['0.001', 0.001], ['"soon"', 'soon'], ['null', null]] as const) {
    it(`a token with expires_in ${what} is fetched once for several requests`, async () => {
      fetches = 0;
      expiresIn = value as never;
      const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
      const tokens = [await cc.token(), await cc.token(), await cc.token()];
      assert.deepEqual(tokens, ['t1', 't1', 't1']);
      assert.equal(fetches, 1);
    });
  }

  // A token endpoint down when the token was due (refreshSkewMs before it expires) failed every call to the
  // upstream until it came back, though the token held was good for up to refreshSkewMs more (user-oauth
  // keeps using a still-valid token). Found by a review.
  it('a renewal that fails while the token held is still valid keeps using it, tried again at most every 5 s', async () => {
    fetches = 0;
    expiresIn = 60;
    const warned: string[] = [];
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 20_000 } as never, agent, 60_000, (err) => warned.push(err.message));
    // Due at 40 s (60 s - 20 s).
    await keptThroughOutage({ token: () => cc.token(), held: 't1', next: 't5', dueMs: 40_000, warned, fetches: () => fetches, down: (on) => (status = on ? 503 : 200) });
  });

  it('a token given as a numeric string (expires_in "3599") lives as long as it says', async () => {
    fetches = 0;
    expiresIn = '3599' as never;
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
    const before = Date.now();
    await cc.token();
    const life = cc.expiresAt! - before;
    assert.ok(life > 3_500_000 && life <= 3_600_000, `kept ${life} ms`);
  });

  it('a token the upstream refused is fetched again, whatever its stated life', async () => {
    fetches = 0;
    expiresIn = 0;
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
    assert.equal(await cc.token(), 't1');
    cc.invalidate('t1');
    assert.equal(await cc.token(), 't2');
    assert.equal(fetches, 2);
  });

  // Concurrent requests sent with one token that the upstream refuses each answer 401: the first 401
  // fetched a new token, and every later 401 for the old one threw that new token away and fetched
  // another (one token request per call in flight).
  it('a late 401 for a token already replaced keeps the new token', async () => {
    fetches = 0;
    expiresIn = 3600;
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
    assert.equal(await cc.token(), 't1');
    cc.invalidate('t1');
    assert.equal(await cc.token(), 't2');
    cc.invalidate('t1');
    cc.invalidate('t1');
    assert.equal(await cc.token(), 't2');
    assert.equal(fetches, 2);
  });

  // As the token exchange and the user-oauth client refuse them: taken, an empty token was sent upstream as
  // "Bearer " and a token of another kind (a DPoP- or MAC-bound one, or one of no stated type) as a bearer
  // token, every call then failing with the upstream's 401 for as long as the token was cached.
  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an empty access_token', { access_token: '', token_type: 'Bearer', expires_in: 3600 }, /no access_token/],
    ['a DPoP token', { access_token: 'd1', token_type: 'DPoP', expires_in: 3600 }, /of type DPoP, not a bearer token/],
    ['a token of no stated type', { access_token: 'n1', expires_in: 3600 }, /of type undefined, not a bearer token/],
  ];
  for (const [what, body, reason] of refused) {
    it(`${what} is refused, not sent upstream`, async () => {
      answer = body;
      try {
        const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
        await assert.rejects(cc.token(), reason);
        assert.equal(cc.expiresAt, undefined, 'nothing cached');
      } finally {
        answer = undefined;
      }
    });
  }

  it('a token type is read as the RFC says, without regard to case ("bearer")', async () => {
    answer = { access_token: 'lower', token_type: 'bearer', expires_in: 3600 };
    try {
      const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
      assert.equal(await cc.token(), 'lower');
    } finally {
      answer = undefined;
    }
  });
});

// A user's exchanged token (RFC 8693) had neither the floor nor the reading: an expires_in of a fraction
// of a second made the gateway exchange a token for every request to the upstream (a request storm on
// the authorization server), and a numeric string was ignored for the 5-minute default.
describe('TokenExchange against a token endpoint', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  let expiresIn: unknown = 60;
  /** The endpoint's HTTP status (503: down; 400: the exchange refused). */
  let status = 200;
  const agent = new Agent();
  const subjects = new SubjectTokens();
  const jwt = (claims: object) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.x`;
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        fetches++;
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        if (status === 400) return void res.end(JSON.stringify({ error: 'invalid_grant' }));
        res.end(JSON.stringify({ access_token: `x${fetches}`, token_type: 'Bearer', expires_in: expiresIn }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    subjects.remember(ALICE, `Bearer ${jwt({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 })}`);
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const exchange = (renewalFailed?: (err: Error) => void) => {
    const settings = { type: 'token-exchange', tokenEndpoint: url, clientId: 'gw', clientSecret: 's', audience: 'u', actorToken: false, refreshSkewMs: 30_000 } as never;
    return new TokenExchange(new TokenExchangeClient('u', settings, agent, 60_000), { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent, renewalFailed);
  };

  // An authorization server down when a user's exchanged token was due (refreshSkewMs before it expires)
  // failed every call of that user to the upstream, though the token held was good for up to refreshSkewMs
  // more (client credentials and user-oauth keep using a still-valid token). Found by a review.
  it('an exchange that fails while the token held is still valid keeps using it, tried again at most every 5 s', async () => {
    fetches = 0;
    expiresIn = 60;
    const warned: string[] = [];
    const te = exchange((err) => warned.push(err.message));
    // Due at 30 s (60 s - 30 s).
    await keptThroughOutage({ token: () => te.token(), held: 'x1', next: 'x5', dueMs: 30_000, warned, fetches: () => fetches, down: (on) => (status = on ? 503 : 200) });
  });

  it('a token the upstream refused, or an exchange the authorization server refused, is not kept', async () => {
    fetches = 0;
    expiresIn = 60;
    const te = exchange();
    assert.equal(await te.token(), 'x1');
    status = 503;
    try {
      te.invalidate('x1');
      await assert.rejects(te.token(), /HTTP 503/);
      status = 200;
      assert.equal(await te.token(), 'x3');
      status = 400;
      await withClockAhead(35_000, () => assert.rejects(te.token(), (err: GatewayError) => err.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED'));
    } finally {
      status = 200;
    }
  });

  for (const [what, value] of [['0.001', 0.001], ['0', 0], ['-30', -30], ['"soon"', 'soon']] as const) {
    it(`a token with expires_in ${what} is exchanged once for several requests, and kept at least 30 s`, async () => {
      fetches = 0;
      expiresIn = value as never;
      const te = exchange();
      const before = Date.now();
      // Requests a few ms apart, as a user's calls are: a token living 1 ms was due again by each.
      const tokens: string[] = [];
      for (let i = 0; i < 3; i++) {
        tokens.push(await te.token());
        await sleep(5);
      }
      assert.deepEqual(tokens, ['x1', 'x1', 'x1']);
      assert.equal(fetches, 1);
      assert.ok(te.expiresAt! - before >= 30_000, `kept ${te.expiresAt! - before} ms`);
    });
  }

  it('a token given as a numeric string (expires_in "3599") lives as long as it says', async () => {
    fetches = 0;
    expiresIn = '3599' as never;
    const te = exchange();
    const before = Date.now();
    await te.token();
    const life = te.expiresAt! - before;
    assert.ok(life > 3_500_000 && life <= 3_600_000, `kept ${life} ms`);
  });

  it('a token with no expires_in lives the 5-minute default', async () => {
    fetches = 0;
    expiresIn = undefined;
    const te = exchange();
    const before = Date.now();
    await te.token();
    const life = te.expiresAt! - before;
    assert.ok(life >= 300_000 && life < 360_000, `kept ${life} ms`);
  });

  it('a token the upstream refused is exchanged again at once, whatever its stated life', async () => {
    fetches = 0;
    expiresIn = 0.001;
    const te = exchange();
    assert.equal(await te.token(), 'x1');
    te.invalidate('x1');
    assert.equal(await te.token(), 'x2');
    assert.equal(fetches, 2);
  });

  it('a late 401 for a token already replaced keeps the new token', async () => {
    fetches = 0;
    expiresIn = 3600;
    const te = exchange();
    assert.equal(await te.token(), 'x1');
    te.invalidate('x1');
    assert.equal(await te.token(), 'x2');
    te.invalidate('x1');
    te.invalidate('x1');
    assert.equal(await te.token(), 'x2');
    assert.equal(fetches, 2);
  });
});

// A user's consented token (user-oauth) was refreshed whenever less than refreshSkewMs was left, without
// the "never before half its life" rule: one living no longer than the skew (60 s by default) was
// refreshed for every request to the upstream, and with a rotating refresh token each refresh spent one.
// Nor had its expires_in the floor or the reading of the others.
describe('a user-oauth token against a token endpoint', () => {
  let endpoint: TokenEndpoint;
  let expiresIn: unknown = 60;
  let rig: Rig;
  before(async () => {
    endpoint = await startTokenEndpoint(() => {
      // The form is counted before it is answered: the first request's answer is at-1.
      const n = endpoint.forms.length;
      return { status: 200, body: { access_token: `at-${n}`, token_type: 'Bearer', expires_in: expiresIn, refresh_token: `rt-${n}` } };
    });
  });
  after(() => endpoint.close());
  afterEach(() => rig?.close());

  /** Alice's link, its token expired: the first request refreshes it (as it always did). */
  const linked = async () => {
    endpoint.forms.length = 0;
    rig = consentRig(endpoint.url, new MemoryVaultStore());
    await rig.vault.save('tickets', ALICE, { accessToken: 'at-0', refreshToken: 'rt-0', expiresAt: Date.now() - 1000 });
  };
  /** Three requests a few ms apart, each with a new credential (the vault is the truth). */
  const three = async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      tokens.push(await rig.credential().token());
      await sleep(5);
    }
    return tokens;
  };

  for (const [what, value] of [['60 (the skew)', 60], ['0.001', 0.001], ['0', 0], ['"soon"', 'soon']] as const) {
    it(`a refreshed token with expires_in ${what} is refreshed once for several requests, and kept at least 30 s`, async () => {
      expiresIn = value as never;
      await linked();
      const before = Date.now();
      assert.deepEqual(await three(), ['at-1', 'at-1', 'at-1']);
      assert.equal(endpoint.forms.length, 1, 'one refresh');
      assert.ok((await rig.vault.load('tickets', ALICE))!.expiresAt - before >= 30_000);
    });
  }

  it('a refreshed token given as a numeric string (expires_in "3599") lives as long as it says', async () => {
    expiresIn = '3599';
    await linked();
    const before = Date.now();
    await rig.credential().token();
    const life = (await rig.vault.load('tickets', ALICE))!.expiresAt - before;
    assert.ok(life > 3_500_000 && life <= 3_600_000, `kept ${life} ms`);
  });

  // A life past what a Date can hold (expires_in 1e13 s, or more) was stored as given: listing links threw
  // RangeError (Invalid time value), so GET /oauth/links and the operators' list of every user's links failed
  // because of one authorization server's answer. A life is now at most 10 years.
  for (const [what, value] of [['1e13', 1e13], ['1e308', 1e308]] as const) {
    it(`a refreshed token with expires_in ${what} leaves the links listable, and is still used`, async () => {
      expiresIn = value;
      await linked();
      assert.deepEqual(await three(), ['at-1', 'at-1', 'at-1']);
      const links = await rig.vault.links();
      assert.equal(links.length, 1);
      assert.ok(Date.parse(links[0]!.expiresAt) > Date.now() + 365 * 86_400_000, links[0]!.expiresAt);
    });
  }

  it('a token redeemed at consent with expires_in 60 is not refreshed for several requests', async () => {
    expiresIn = 60;
    endpoint.forms.length = 0;
    rig = consentRig(endpoint.url, new MemoryVaultStore());
    const agent = new Agent();
    try {
      const client = new UserOAuthClient({ name: 'tickets', url: 'http://127.0.0.1:9/mcp' }, rig.upstream.auth, agent, 60_000);
      await rig.vault.save('tickets', ALICE, await client.redeem('code', 'verifier', 'https://gw.test/oauth/callback'));
    } finally {
      await agent.close();
    }
    assert.deepEqual(await three(), ['at-1', 'at-1', 'at-1']);
    assert.equal(endpoint.forms.length, 1, 'the redeem only');
  });

  it('a link stored without its renewal time (before this change) keeps the skew rule: refreshed within refreshSkewMs of expiry', async () => {
    expiresIn = 3600;
    endpoint.forms.length = 0;
    rig = consentRig(endpoint.url, new MemoryVaultStore());
    await rig.vault.save('tickets', ALICE, { accessToken: 'at-0', refreshToken: 'rt-0', expiresAt: Date.now() + 50_000 });
    assert.equal(await rig.credential().token(), 'at-1');
    assert.equal(endpoint.forms.length, 1);
  });
});

// The gateway's own token sent as actor_token is kept at least 30 s whatever its expires_in (the floor
// above): one the authorization server issued for less, or revoked, was sent expired, and no 401 renews a
// token the token endpoint itself refuses: every exchange was refused (SWB_UPSTREAM_CREDENTIAL_REFUSED)
// until the floor ran out. A refused exchange now fetches the actor token again once and retries.
describe('TokenExchange with an actor token the authorization server no longer accepts', () => {
  let server: Server;
  let url: string;
  const grants: string[] = [];
  /** The actor tokens the server still accepts. */
  const live = new Set<string>();
  /** The subject's grant refused, whatever the actor token. */
  let refuseAll = false;
  /** The gateway's client secret no longer accepted (changed at the authorization server). */
  let secretChanged = false;
  const agent = new Agent();
  const subjects = new SubjectTokens();
  const jwt = (claims: object) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.x`;
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        grants.push(form.get('grant_type')!);
        res.setHeader('content-type', 'application/json');
        if (secretChanged) return void res.writeHead(401).end(JSON.stringify({ error: 'invalid_client' }));
        if (form.get('grant_type') === 'client_credentials') {
          const actor = `a${grants.length}`;
          live.add(actor);
          return void res.end(JSON.stringify({ access_token: actor, token_type: 'Bearer', expires_in: 3 }));
        }
        if (refuseAll || !live.has(form.get('actor_token') ?? '')) return void res.writeHead(400).end(JSON.stringify({ error: 'invalid_grant', error_description: 'actor_token: expired' }));
        res.end(JSON.stringify({ access_token: `x${grants.length}`, token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    subjects.remember(ALICE, `Bearer ${jwt({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 })}`);
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('the exchange refused for it fetches the actor token again once, and succeeds', async () => {
    const settings = { type: 'token-exchange', tokenEndpoint: url, clientId: 'gw', clientSecret: 's', audience: 'u', actorToken: true, refreshSkewMs: 30_000 } as never;
    const client = new TokenExchangeClient('u', settings, agent, 60_000);
    const first = await new TokenExchange(client, { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent).token();
    assert.deepEqual(grants, ['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange']);
    assert.ok(first);
    live.clear(); // a1 expired at the authorization server (3 s), still held by the gateway (30 s)
    const second = await new TokenExchange(client, { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent).token();
    assert.match(second, /^x/);
    assert.equal(grants.filter((g) => g === 'client_credentials').length, 2, 'the actor token fetched again once');
  });

  it('a refusal that is not about the actor token is retried once, then answered as refused', async () => {
    refuseAll = true;
    grants.length = 0;
    const settings = { type: 'token-exchange', tokenEndpoint: url, clientId: 'gw', clientSecret: 's', audience: 'u', actorToken: true, refreshSkewMs: 30_000 } as never;
    const te = new TokenExchange(new TokenExchangeClient('u', settings, agent, 60_000), { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent);
    const err = await te.token().then(() => assert.fail('expected a refusal'), (e: unknown) => e as GatewayError);
    assert.equal(err.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED');
    assert.equal(grants.filter((g) => g !== 'client_credentials').length, 2, 'two exchanges, no more');
  });

  it('a retry that cannot get a new actor token answers the exchange\'s own refusal (invalid_client), not the actor\'s failure', async () => {
    refuseAll = false;
    const settings = { type: 'token-exchange', tokenEndpoint: url, clientId: 'gw', clientSecret: 's', audience: 'u', actorToken: true, refreshSkewMs: 30_000 } as never;
    const client = new TokenExchangeClient('u', settings, agent, 60_000);
    await new TokenExchange(client, { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent).token();
    secretChanged = true;
    try {
      const err = await new TokenExchange(client, { ...ALICE, session: { id: 's1', principal: ALICE } }, subjects, agent).token().then(() => assert.fail('expected a refusal'), (e: unknown) => e as GatewayError);
      assert.equal(err.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED', err.message);
      assert.equal(err.details?.reason, 'invalid_client');
    } finally {
      secretChanged = false;
    }
  });
});
