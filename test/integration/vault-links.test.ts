// A user's links are read from their own records: in memory (links kept by user) and in Redis (a set of
// each user's upstreams beside the hash of links), including links an earlier version stored before that
// index existed, indexed once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { CredentialVault } from '../../src/upstream/credential-vault.js';
import { RedisVaultStore } from '../../src/upstream/redis-vault-store.js';
import { userKey, type UpstreamUser } from '../../src/upstream/upstream-user.js';
import { MemoryVaultStore, type VaultStore } from '../../src/upstream/vault-store.js';
import { vaultStores } from '../helpers/vault-stores.js';

const user = (subject: string): UpstreamUser => ({ issuer: 'https://issuer.test', subject, tenant: 'acme' });
const [alice, bob] = [user('alice'), user('bob')];
const tokens = { accessToken: 'at', refreshToken: 'rt', expiresAt: Date.now() + 60_000 };

describe("a user's links", () => {
  const stores = vaultStores();

  for (const [name, store] of stores.kinds) {
    it(`${name}: listed from the user's own records, kept as links are made, refreshed and revoked`, async () => {
      const s: VaultStore = store();
      const v = new CredentialVault(randomBytes(32), [], s);
      await v.save('tickets', alice, tokens);
      await v.save('notes', alice, tokens);
      await v.save('tickets', bob, tokens);
      const mine = async (u: UpstreamUser) => (await s.listUser(u)).map((e) => `${e.user.subject}/${e.upstream}`).sort();
      assert.deepEqual(await mine(alice), ['alice/notes', 'alice/tickets']);
      assert.deepEqual(await mine(bob), ['bob/tickets']);
      assert.deepEqual(await mine(user('carol')), []);
      const read = (await v.loadLink('notes', alice))!;
      assert.equal(await v.update('notes', alice, read, { ...tokens, accessToken: 'at-2' }), true);
      assert.equal(await v.revoke('tickets', alice), true);
      assert.deepEqual(await mine(alice), ['alice/notes']);
      assert.equal(await v.discard('notes', alice, (await v.loadLink('notes', alice))!), true);
      assert.deepEqual(await mine(alice), []);
      assert.deepEqual((await v.links({ ...alice })).length, 0);
      assert.deepEqual((await v.links({ ...bob })).map((l) => l.subject), ['bob']);
      assert.equal((await s.list()).length, 1, "an operator's listing still sees every link");
    });
  }

  it('Redis: links an earlier version stored (no index) are listed for their user, indexed once', async () => {
    const v = new CredentialVault(randomBytes(32), [], new MemoryVaultStore());
    // As the earlier version wrote them: fields of the hash, nothing else.
    for (const [u, upstream] of [[alice, 'tickets'], [alice, 'notes'], [bob, 'tickets']] as const) {
      const entry = { user: u, upstream, linkedAt: Date.now(), expiresAt: tokens.expiresAt, refreshable: true, sealed: v.seal(u, upstream, tokens) };
      await stores.raw.hset('swb:vault:links', `${upstream}\n${userKey(u)}`, JSON.stringify(entry));
    }
    const s = new RedisVaultStore(stores.raw, 'swb:');
    assert.deepEqual((await s.listUser(alice)).map((e) => e.upstream).sort(), ['notes', 'tickets']);
    assert.deepEqual((await s.listUser(bob)).map((e) => e.upstream), ['tickets']);
    assert.equal(await stores.raw.get('swb:vault:indexed'), '1', 'done once for this Redis');
    assert.deepEqual((await new RedisVaultStore(stores.raw, 'swb:').listUser(bob)).map((e) => e.upstream), ['tickets'], 'another replica reads the same index');
  });

  // During a rolling upgrade a replica of the earlier release wrote a link to the hash alone (no SADD to the
  // user's index): it never showed in the user's listing. The configured upstreams' fields are read too.
  it("Redis: a link an earlier release's replica wrote (HSET only) or deleted (HDEL only) is listed as it is, the index repaired", async () => {
    const s = new RedisVaultStore(stores.raw, 'swb:');
    const v = new CredentialVault(randomBytes(32), [], s, () => '', () => ['tickets', 'notes', 'wiki']);
    await v.save('notes', alice, tokens);
    await v.save('wiki', alice, tokens);
    const index = `swb:vault:user:${userKey(alice)}`;
    // Listed once by this release: the index is built (marker vault:indexed) before the earlier release writes.
    assert.deepEqual((await v.links({ ...alice })).map((l) => l.upstream), ['notes', 'wiki']);
    const entry = { user: alice, upstream: 'tickets', linkedAt: Date.now(), expiresAt: tokens.expiresAt, refreshable: true, sealed: v.seal(alice, 'tickets', tokens) };
    await stores.raw.hset('swb:vault:links', `tickets\n${userKey(alice)}`, JSON.stringify(entry));
    await stores.raw.hdel('swb:vault:links', `wiki\n${userKey(alice)}`);
    assert.deepEqual((await v.links({ ...alice })).map((l) => l.upstream), ['notes', 'tickets']);
    assert.deepEqual((await stores.raw.smembers(index)).sort(), ['notes', 'tickets'], 'the index agrees with the hash again');
    assert.deepEqual((await v.links({ ...bob })).map((l) => l.upstream), [], "no one else's");
  });
});
