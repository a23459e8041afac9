// What a refresh the token endpoint does not grant does to a user's link (a real token endpoint on a
// loopback port, the gateway's own consent, vault and log). Only invalid_grant ends the consent: a
// throttled or failing authorization server, or one refusing the gateway's own client (a mistyped secret
// after a reload), used to delete every affected user's link.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { GatewayError } from '../../../src/errors.js';
import { MemoryVaultStore } from '../../../src/upstream/vault-store.js';
import { ALICE, consentRig, startTokenEndpoint, type Rig, type TokenAnswer, type TokenEndpoint } from '../../helpers/refresh-rig.js';

describe('a refresh the token endpoint does not grant', () => {
  let endpoint: TokenEndpoint;
  let next: TokenAnswer;
  let rig: Rig;
  before(async () => {
    endpoint = await startTokenEndpoint(() => next);
  });
  after(() => endpoint.close());
  afterEach(() => rig?.close());

  /** Alice's link, her access token expired (expired: true) or only within the refresh skew. */
  const linked = async (o: { expired: boolean }) => {
    rig = consentRig(endpoint.url, new MemoryVaultStore());
    await rig.vault.save('tickets', ALICE, { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: Date.now() + (o.expired ? -1000 : 5000) });
  };
  const failure = (p: Promise<unknown>) => p.then((v) => assert.fail(`expected a failure, got ${String(v)}`), (e: unknown) => e as GatewayError);

  for (const [what, answer] of [
    ['429 (throttled)', { status: 429, body: { error: 'slow_down' } }],
    ['429 without a body', { status: 429, body: '' }],
    ['503', { status: 503, body: { error: 'temporarily_unavailable' } }],
  ] as const) {
    it(`${what}: retry later (SWB_UPSTREAM_UNAVAILABLE); the link stays`, async () => {
      await linked({ expired: true });
      next = answer;
      const err = await failure(rig.credential().token());
      assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message);
      assert.equal((await rig.vault.load('tickets', ALICE))?.refreshToken, 'rt-1', 'the link is kept');
      // Once the server answers again, the same link refreshes.
      next = { status: 200, body: { access_token: 'at-2', token_type: 'Bearer', expires_in: 3600 } };
      assert.equal(await rig.credential().token(), 'at-2');
    });
  }

  it('429 while the stored token is still valid (within the refresh skew): the stored token is used; the link stays', async () => {
    await linked({ expired: false });
    next = { status: 429, body: { error: 'slow_down' } };
    assert.equal(await rig.credential().token(), 'at-1');
    assert.equal((await rig.vault.load('tickets', ALICE))?.refreshToken, 'rt-1');
  });

  for (const [what, answer] of [
    ['invalid_client (the gateway’s secret is wrong)', { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } }],
    ['invalid_request', { status: 400, body: { error: 'invalid_request' } }],
    ['a 403 with no OAuth error', { status: 403, body: '<html>forbidden</html>' }],
  ] as const) {
    it(`${what}: the gateway's configuration is refused (SWB_UPSTREAM_CREDENTIAL_REFUSED, logged as an error); the link stays`, async () => {
      await linked({ expired: true });
      next = answer;
      const err = await failure(rig.credential().token());
      assert.equal(err.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED', err.message);
      const reason = typeof answer.body === 'object' ? answer.body.error : `HTTP ${answer.status}`;
      assert.equal(err.details?.reason, reason);
      assert.match(err.message, /link is kept/);
      assert.equal((await rig.vault.load('tickets', ALICE))?.refreshToken, 'rt-1', 'the link is kept');
      const line = rig.logs.find((l) => l.reason === reason);
      assert.ok(line, `a log line names ${reason}`);
      assert.equal(line.level, 50, 'at error level: an operator must act');
      assert.doesNotMatch(JSON.stringify(rig.logs), /rt-1|at-1|s3cret/, 'no token or secret in the log');
    });
  }

  it('invalid_grant while the stored token is still valid: the consent ended, the link goes', async () => {
    await linked({ expired: false });
    next = { status: 400, body: { error: 'invalid_grant' } };
    const err = await failure(rig.credential().token());
    assert.equal(err.code, 'SWB_UPSTREAM_CONSENT_REQUIRED');
    assert.equal(err.details?.reason, 'expired');
    assert.equal(await rig.vault.load('tickets', ALICE), undefined, 'the link is deleted');
  });
});
