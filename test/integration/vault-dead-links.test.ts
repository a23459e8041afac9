// A link that holds no refresh token and whose access token expired is dead: its next use asks the user to
// consent again (and deletes it), but a link its user never used again was kept forever, listed as any other.
// It is listed as expired, and deleted DEAD_LINK_RETENTION_MS after it expired by a sweep (DeadLinks), in
// memory and in Redis (with its members of the indexes; one replica sweeps for all).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/observability/logger.js';
import { CredentialVault } from '../../src/upstream/credential-vault.js';
import { DEAD_LINK_RETENTION_MS, DeadLinks } from '../../src/upstream/dead-links.js';
import { RedisVaultStore } from '../../src/upstream/redis-vault-store.js';
import { userKey, type UpstreamUser } from '../../src/upstream/upstream-user.js';
import type { VaultStore } from '../../src/upstream/vault-store.js';
import { vaultStores } from '../helpers/vault-stores.js';

const user = (subject: string): UpstreamUser => ({ issuer: 'https://issuer.test', subject, tenant: 'acme' });
const DAY = 86_400_000;

describe('dead links', () => {
  const stores = vaultStores();

  for (const [name, store] of stores.kinds) {
    it(`${name}: listed as expired, deleted ${DEAD_LINK_RETENTION_MS / DAY} days after they expired; refreshable and live links kept`, async () => {
      const s: VaultStore = store();
      const v = new CredentialVault(randomBytes(32), [], s, () => '', () => ['tickets']);
      const now = Date.now();
      await v.save('tickets', user('old'), { accessToken: 'at', expiresAt: now - DEAD_LINK_RETENTION_MS - DAY });
      await v.save('tickets', user('recent'), { accessToken: 'at', expiresAt: now - DAY });
      await v.save('tickets', user('refreshable'), { accessToken: 'at', refreshToken: 'rt', expiresAt: now - DEAD_LINK_RETENTION_MS - DAY });
      await v.save('tickets', user('live'), { accessToken: 'at', expiresAt: now + DAY });
      const states = async () => Object.fromEntries((await v.links()).map((l) => [l.subject, l.state]));
      assert.deepEqual(await states(), { live: 'active', old: 'expired', recent: 'expired', refreshable: 'active' });
      await new DeadLinks(s, createLogger('silent')).sweep(now);
      assert.deepEqual(await states(), { live: 'active', recent: 'expired', refreshable: 'active' });
      assert.deepEqual(await v.links({ ...user('old') }), []);
      assert.equal(await v.load('tickets', user('old')), undefined);
      if (name === 'Redis') {
        assert.deepEqual(await stores.raw.smembers(`swb:vault:user:${userKey(user('old'))}`), [], "out of the user's index");
        assert.equal(await stores.raw.zcard('swb:vault:order'), 3, 'out of the ordered index');
        assert.equal((await v.linksAfter({}, undefined, 10)).length, 3);
      }
    });
  }

  for (const [name, store] of stores.kinds) {
    // A link to an upstream no longer configured (removed by a reload) is never used again, so its refresh
    // token was kept sealed for ever (found by a review). It goes as a dead link does: once its access token
    // expired DEAD_LINK_RETENTION_MS ago (an upstream removed and put back within that keeps its links).
    it(`${name}: links to an upstream no longer configured are deleted ${DEAD_LINK_RETENTION_MS / DAY} days after their access token expired, refresh token or not`, async () => {
      const s: VaultStore = store();
      const v = new CredentialVault(randomBytes(32), [], s, () => '', () => ['tickets']);
      const now = Date.now();
      await v.save('gone', user('old'), { accessToken: 'at', refreshToken: 'rt', expiresAt: now - DEAD_LINK_RETENTION_MS - DAY });
      await v.save('gone', user('recent'), { accessToken: 'at', refreshToken: 'rt', expiresAt: now - DAY });
      await v.save('tickets', user('old'), { accessToken: 'at', refreshToken: 'rt', expiresAt: now - DEAD_LINK_RETENTION_MS - DAY });
      await new DeadLinks(s, createLogger('silent'), () => ['tickets']).sweep(now);
      const left = (await v.links()).map((l) => `${l.upstream}/${l.subject}`).sort();
      assert.deepEqual(left, ['gone/recent', 'tickets/old']);
      if (name === 'Redis') assert.equal(await stores.raw.zcard('swb:vault:order'), 2, 'out of the ordered index');
    });
  }

  it('Redis: one replica sweeps for all within the hour', async () => {
    const [a, b] = [new RedisVaultStore(stores.raw, 'swb:'), new RedisVaultStore(stores.raw, 'swb:')];
    const v = new CredentialVault(randomBytes(32), [], a);
    const before = Date.now() - DEAD_LINK_RETENTION_MS;
    await v.save('tickets', user('old'), { accessToken: 'at', expiresAt: before - DAY });
    assert.equal(await a.sweepDead(before, 3_600_000), 1);
    await v.save('tickets', user('old2'), { accessToken: 'at', expiresAt: before - DAY });
    assert.equal(await b.sweepDead(before, 3_600_000), undefined, 'swept by the other replica this hour');
    assert.equal((await v.links()).length, 1);
  });
});
