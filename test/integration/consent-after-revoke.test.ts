// A revocation voids the user's consents still pending for that upstream. A user (or an operator) revokes a
// link; a consent link given before it (a second -32042, one sent to someone else, a tab left open at the
// authorization server) was still good for vault.flowTtlMs, and completing it linked the account again, so
// the link just revoked came back (found by a review). Consents begun before the revocation are now refused
// at the callback and nothing is linked; one begun after it links as always. Memory and Redis alike.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { askedConsent, authorize, consent, hop } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startConsentGateway, type ConsentGateway } from '../helpers/consent-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ISSUER } from '../helpers/tokens.js';

const AUDIENCE = 'https://tickets.test';
const ALICE = { issuer: ISSUER, subject: 'alice', tenant: 'acme' };

for (const where of ['memory', 'redis'] as const) {
  describe(`user consent (${where}): a consent begun before a revocation does not link again`, () => {
    let rig: ConsentGateway;
    let as: ConsentServer;
    let upstream: IdentityUpstream;
    let redis: TestRedis | undefined;
    let gw: RunningGateway;
    let token: string;

    before(async () => {
      as = await startConsentServer({ audience: AUDIENCE });
      upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys, authorizationServer: as.issuer });
      if (where === 'redis') redis = await startRedis();
      rig = await startConsentGateway(
        [{ name: 'tickets', path: '/mcp', url: upstream.url, authorizationServer: as.issuer }],
        redis ? { store: { redis: { url: redis.url, keyPrefix: 'rv:' } } } : {},
      );
      ({ gw, token } = rig);
    });
    after(async () => {
      await rig?.close();
      await redis?.stop();
      await upstream?.close();
      await as?.close();
    });

    const revoke = () => fetch(`${gw.base}/oauth/links/tickets`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    const linked = async () => (await gw.app.gateway.consent!.vault.load('tickets', ALICE)) !== undefined;

    it('a link given before the revocation, and a sign-in under way at the authorization server, are refused after it', async () => {
      as.loginAs = 'alice';
      const unopened = await askedConsent(gw.base, token, 'alice');
      const underWay = await authorize(gw.base, await askedConsent(gw.base, token, 'alice'));
      assert.equal((await consent(gw.base, await askedConsent(gw.base, token, 'alice'))).status, 200);
      assert.ok(await linked());
      assert.equal((await revoke()).status, 204);
      const codes = as.codes.get('alice') ?? 0;

      const late = await hop(underWay.callback, underWay.cookie);
      assert.equal(late.status, 409, late.text);
      assert.match(late.text, /revoked/);
      assert.equal(await linked(), false, 'the sign-in begun before the revocation linked the account again');
      const old = await consent(gw.base, unopened);
      assert.equal(old.status, 409, old.text);
      assert.equal(await linked(), false, 'the link given before the revocation linked the account again');
      assert.equal(as.codes.get('alice') ?? 0, codes, 'a code of a consent begun before the revocation was redeemed');
    });

    it('a DELETE naming an upstream not configured marks nothing (the store does not grow with made-up names)', async () => {
      const made = await fetch(`${gw.base}/oauth/links/made-up-${where}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      assert.equal(made.status, 404);
      const store = gw.app.gateway.consent!.vault.store;
      assert.equal(await store.revokedAt(`made-up-${where}`, ALICE), undefined);
      assert.notEqual(await store.revokedAt('tickets', ALICE), undefined, 'the revocation of a configured upstream is marked');
    });

    it('a consent begun after the revocation links as always', async () => {
      as.loginAs = 'alice';
      const done = await consent(gw.base, await askedConsent(gw.base, token, 'alice'));
      assert.equal(done.status, 200, done.text);
      assert.ok(await linked());
    });
  });
}
