// Two credentials of one user refresh at once against a rotating authorization server (each refresh
// token works once; the winner's answer takes 100 ms, the loser's reuse is refused at once): in one
// process (per-session stdio processes, each start its own credential) and on two replicas sharing the
// vault in a real redis-server. The loser used to read the vault before the winner had written it, take
// its invalid_grant for a revoked grant and delete the link, and the winner then found no link: both
// calls failed and the user had to consent again. Also: a refresh held at the token endpoint while the
// link is revoked, or revoked and consented again, writes nothing back over what is stored by then.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { GatewayError } from '../../src/errors.js';
import { CredentialVault } from '../../src/upstream/credential-vault.js';
import { RedisVaultStore } from '../../src/upstream/redis-vault-store.js';
import { MemoryVaultStore, type VaultStore } from '../../src/upstream/vault-store.js';
import { ALICE, consentRig, held, rotating, VAULT_KEY, startTokenEndpoint, type Rig, type TokenAnswer, type TokenEndpoint } from '../helpers/refresh-rig.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('concurrent refreshes of one user’s link against a rotating authorization server', () => {
  let redis: TestRedis;
  const clients: Redis[] = [];
  let endpoint: TokenEndpoint;
  let answer: (form: URLSearchParams) => TokenAnswer | Promise<TokenAnswer>;
  const rigs: Rig[] = [];
  before(async () => {
    redis = await startRedis();
    endpoint = await startTokenEndpoint((form) => answer(form));
  });
  afterEach(async () => {
    await Promise.all(rigs.splice(0).map((r) => r.close()));
    for (const c of clients) await c.flushall();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.quit()));
    await endpoint?.close();
    await redis?.stop();
  });

  const redisStore = (): VaultStore => {
    const c = new Redis(redis.url);
    clients.push(c);
    return new RedisVaultStore(c, 'swb:');
  };
  const rig = (store: VaultStore): Rig => {
    const r = consentRig(endpoint.url, store);
    rigs.push(r);
    return r;
  };
  /** Alice's link, her access token within the refresh skew: the next use refreshes. */
  const link = (r: Rig, refreshToken = 'rt-1') => r.vault.save('tickets', ALICE, { accessToken: 'at-1', refreshToken, expiresAt: Date.now() + 5000 });
  const outcome = (p: Promise<string>) => p.then((v) => v, (e: GatewayError) => `${e.code}: ${e.message}`);

  it('one process, two credentials: both get the winner’s token, the link survives with the rotated refresh token', async () => {
    const server = rotating('rt-1', 100);
    answer = server.answer;
    const r = rig(new MemoryVaultStore());
    await link(r);
    const got = await Promise.all([outcome(r.credential().token()), outcome(r.credential().token())]);
    assert.deepEqual(got, ['at-2', 'at-2']);
    const stored = await r.vault.load('tickets', ALICE);
    assert.equal(stored?.accessToken, 'at-2');
    assert.equal(stored?.refreshToken, 'rt-2');
    assert.equal(server.issued(), 1, 'one rotation');
  });

  it('two replicas on one Redis vault: both get the winner’s token, the link survives with the rotated refresh token', async () => {
    const server = rotating('rt-1', 100);
    answer = server.answer;
    const a = rig(redisStore());
    const b = rig(redisStore());
    await link(a);
    const got = await Promise.all([outcome(a.credential().token()), outcome(b.credential().token())]);
    assert.deepEqual(got, ['at-2', 'at-2']);
    for (const r of [a, b]) {
      const stored = await r.vault.load('tickets', ALICE);
      assert.equal(stored?.accessToken, 'at-2');
      assert.equal(stored?.refreshToken, 'rt-2');
    }
    assert.equal(server.issued(), 1, 'one rotation');
  });

  // The loser waited 2 s for the winner's token to reach the vault, then took the refused refresh token for
  // a grant that ended and deleted the link; the winner's answer, slower than that, found no link to store
  // into: both calls asked for consent again and the rotated refresh token was lost. One replica at a time
  // now refreshes a link (a claim in the store); the others wait for its token instead of spending theirs.
  it('two replicas on one Redis vault, the winner answered after 3 s: both get its token, the link survives', async () => {
    const server = rotating('rt-1', 3000);
    answer = server.answer;
    const a = rig(redisStore());
    const b = rig(redisStore());
    await link(a);
    const got = await Promise.all([outcome(a.credential().token()), outcome(b.credential().token())]);
    assert.deepEqual(got, ['at-2', 'at-2']);
    assert.equal((await b.vault.load('tickets', ALICE))?.refreshToken, 'rt-2');
    assert.equal(server.issued(), 1, 'one rotation');
  });

  it('a grant revoked at the authorization server still ends the link when both replicas refresh at once', async () => {
    answer = () => ({ status: 400, body: { error: 'invalid_grant' } });
    const a = rig(redisStore());
    const b = rig(redisStore());
    await link(a);
    const got = await Promise.all([outcome(a.credential().token()), outcome(b.credential().token())]);
    for (const g of got) assert.match(g, /^SWB_UPSTREAM_CONSENT_REQUIRED: .*has ended/);
    assert.equal(await a.vault.load('tickets', ALICE), undefined, 'the link is deleted');
  });

  const stores = [
    ['memory', () => new MemoryVaultStore()],
    ['Redis', redisStore],
  ] as const;
  /** Alice's call on a rig over `store`, its refresh arrived at the authorization server and held there. */
  const refreshWaiting = async (store: VaultStore) => {
    const slow = held();
    answer = slow.answer;
    const r = rig(store);
    await link(r);
    const call = outcome(r.credential().token());
    await slow.arrived;
    return { r, call, slow };
  };
  const refreshed = { status: 200, body: { access_token: 'at-old-account-refreshed', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-old-account-refreshed' } };
  const newAccount = { accessToken: 'at-new-account', refreshToken: 'rt-new-account', expiresAt: Date.now() + 3_600_000 };

  // A refresh slow to answer used to write the old consent's refreshed tokens over the new consent
  // stored meanwhile (update checked only that a link existed): calls then went upstream as the old account.
  for (const [name, store] of stores) {
    it(`${name}: a link revoked and consented again (another account) while a refresh is in flight keeps the new consent`, async () => {
      const { r, call, slow } = await refreshWaiting(store());
      await r.vault.revoke('tickets', ALICE);
      await r.vault.save('tickets', ALICE, newAccount);
      slow.release(refreshed);
      assert.equal(await call, 'at-new-account', 'the call uses the new consent');
      const stored = await r.vault.load('tickets', ALICE);
      assert.equal(stored?.accessToken, 'at-new-account', 'the refresh did not write over the new consent');
      assert.equal(stored?.refreshToken, 'rt-new-account');
    });

    it(`${name}: a link revoked while a refresh is in flight stays revoked`, async () => {
      const { r, call, slow } = await refreshWaiting(store());
      await r.vault.revoke('tickets', ALICE);
      slow.release(refreshed);
      assert.match(await call, /^SWB_UPSTREAM_CONSENT_REQUIRED: /);
      assert.equal(await r.vault.load('tickets', ALICE), undefined, 'the refresh did not bring the link back');
    });

    it(`${name}: a link whose token ran out with no refresh token is not deleted once consented again meanwhile`, async () => {
      const r = rig(store());
      await r.vault.save('tickets', ALICE, { accessToken: 'at-ran-out', expiresAt: Date.now() - 1000 });
      // The credential reads the link, then the new consent is written, before the credential acts on what it read.
      const call = outcome(r.credential().token());
      await r.vault.save('tickets', ALICE, newAccount);
      assert.equal(await call, 'at-new-account');
      assert.equal((await r.vault.load('tickets', ALICE))?.accessToken, 'at-new-account', 'the new consent is kept');
    });
  }

  // Key rotation: a link read with a previous key was sealed again with the current one over whatever was
  // stored by then (the write checked only that a link existed), bringing the old account back.
  for (const [name, store] of stores) {
    it(`${name}: a link read with a previous key is sealed again only while it is still the one stored`, async () => {
      const s = store();
      const previous = randomBytes(32);
      await new CredentialVault(previous, [], s).save('tickets', ALICE, { accessToken: 'at-old-key', refreshToken: 'rt-old-key', expiresAt: Date.now() + 3_600_000 });
      const rotated = new CredentialVault(VAULT_KEY, [previous], s);
      // The read finds the old entry; a new consent is stored before the reseal of what was read.
      const reading = rotated.loadLink('tickets', ALICE);
      await rotated.save('tickets', ALICE, newAccount);
      const read = await reading;
      assert.equal((await rotated.load('tickets', ALICE))?.accessToken, 'at-new-account', 'the reseal did not write over the new consent');
      assert.equal(read?.tokens.accessToken, 'at-new-account', 'the read answers what is stored now');
    });
  }

  for (const [name, store] of stores) {
    it(`${name}: a refused refresh token deletes the link only while it is still the one stored`, async () => {
      const r = rig(store());
      await link(r, 'rt-old');
      await r.vault.update('tickets', ALICE, (await r.vault.loadLink('tickets', ALICE))!, { accessToken: 'at-new', refreshToken: 'rt-new', expiresAt: Date.now() + 3_600_000 });
      assert.equal(await r.vault.revokeIf('tickets', ALICE, 'rt-old'), false, 'another refresh replaced it: kept');
      assert.equal((await r.vault.load('tickets', ALICE))?.refreshToken, 'rt-new');
      assert.equal(await r.vault.revokeIf('tickets', ALICE, 'rt-new'), true);
      assert.equal(await r.vault.load('tickets', ALICE), undefined);
    });
  }
});
