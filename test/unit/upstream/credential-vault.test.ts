// The sealed vault: AES-256-GCM with a random IV, the principal and upstream as associated data, key
// rotation (previous keys open and the entry is sealed again), and the single-use consent records.
import assert from 'node:assert/strict';
import { createCipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConsentFlows } from '../../../src/upstream/consent-flows.js';
import { CredentialVault } from '../../../src/upstream/credential-vault.js';
import { MemoryVaultStore } from '../../../src/upstream/vault-store.js';
import { vaultAudience } from '../../../src/upstream/vault-audience.js';
import type { UpstreamConfig } from '../../../src/config/schema.js';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';

const alice = { issuer: 'https://issuer.test', subject: 'alice', tenant: 'acme' };
const bob = { issuer: 'https://issuer.test', subject: 'bob', tenant: 'acme' };
const tokens = { accessToken: 'at-secret-alice', refreshToken: 'rt-secret-alice', expiresAt: Date.now() + 60_000 };

describe('credential vault', () => {
  it('seals with a fresh IV each time; opens only as the same user and upstream', () => {
    const v = new CredentialVault(randomBytes(32), [], new MemoryVaultStore());
    const a = v.seal(alice, 'tickets', tokens);
    const b = v.seal(alice, 'tickets', tokens);
    assert.notEqual(a, b);
    assert.ok(!a.includes('secret'));
    assert.deepEqual(v.open(alice, 'tickets', a)?.tokens, tokens);
    assert.equal(v.open(bob, 'tickets', a), undefined, 'another user');
    assert.equal(v.open(alice, 'notes', a), undefined, 'another upstream');
    assert.equal(v.open({ ...alice, tenant: 'other' }, 'tickets', a), undefined, 'another tenant');
    const parts = a.split('.');
    // One bit flipped (replacing the byte with a fixed one left it unchanged one time in 256).
    const flipped = Buffer.from(parts[3]!, 'base64url');
    flipped[0] = flipped[0]! ^ 0x01;
    parts[3] = flipped.toString('base64url');
    assert.equal(v.open(alice, 'tickets', parts.join('.')), undefined, 'tampered');
  });

  it('an entry whose tag was cut short does not open (GCM would check only the bytes it is given)', () => {
    const v = new CredentialVault(randomBytes(32), [], new MemoryVaultStore());
    const parts = v.seal(alice, 'tickets', tokens).split('.');
    for (const bytes of [4, 8, 12, 15]) {
      const cut = [...parts.slice(0, 4), Buffer.from(parts[4]!, 'base64url').subarray(0, bytes).toString('base64url')].join('.');
      assert.equal(v.open(alice, 'tickets', cut), undefined, `a ${bytes}-byte tag opened the entry`);
    }
  });

  it('a stored entry copied under another user does not open', async () => {
    const store = new MemoryVaultStore();
    const v = new CredentialVault(randomBytes(32), [], store);
    await v.save('tickets', alice, tokens);
    const entry = (await store.get('tickets', alice))!;
    await store.put({ ...entry, user: bob });
    assert.equal(await v.load('tickets', bob), undefined);
    assert.deepEqual(await v.load('tickets', alice), tokens);
  });

  it('rotation: a previous key opens, and the entry is sealed again with the current key; a dropped key opens nothing', async () => {
    const store = new MemoryVaultStore();
    const [k1, k2] = [randomBytes(32), randomBytes(32)];
    await new CredentialVault(k1, [], store).save('tickets', alice, tokens);
    const old = (await store.get('tickets', alice))!.sealed;
    const rotated = new CredentialVault(k2, [k1], store);
    assert.deepEqual(await rotated.load('tickets', alice), tokens);
    const resealed = (await store.get('tickets', alice))!.sealed;
    assert.notEqual(resealed.split('.')[1], old.split('.')[1], 'sealed with the new key id');
    assert.deepEqual(await new CredentialVault(k2, [], store).load('tickets', alice), tokens, 'the new key alone opens it now');
    await store.put({ ...(await store.get('tickets', alice))!, sealed: old });
    assert.equal(await new CredentialVault(k2, [], store).load('tickets', alice), undefined, 'the old key was dropped');
  });

  it('rotation: an entry read with a previous key is sealed again only while it is still the one stored', async () => {
    const store = new MemoryVaultStore();
    const [k1, k2] = [randomBytes(32), randomBytes(32)];
    await new CredentialVault(k1, [], store).save('tickets', alice, tokens);
    const rotated = new CredentialVault(k2, [k1], store);
    // The read finds the old entry; a new consent is stored before the reseal of what was read.
    const reading = rotated.loadLink('tickets', alice);
    await rotated.save('tickets', alice, { ...tokens, accessToken: 'at-new-consent' });
    const read = await reading;
    assert.equal((await rotated.load('tickets', alice))?.accessToken, 'at-new-consent', 'the reseal did not write the old tokens over the new consent');
    assert.equal(read?.tokens.accessToken, 'at-new-consent', 'what is stored now is what the read answers');
    assert.equal(read?.version, (await store.get('tickets', alice))!.sealed);
  });

  it('a refresh is stored only over the link it was refreshed from: never over a revocation, a new consent or another refresh', async () => {
    const store = new MemoryVaultStore();
    const v = new CredentialVault(randomBytes(32), [], store);
    await v.save('tickets', alice, tokens);
    const read = (await v.loadLink('tickets', alice))!;
    assert.equal(await v.update('tickets', alice, read, { ...tokens, accessToken: 'at-2' }), true);
    assert.equal((await v.load('tickets', alice))?.accessToken, 'at-2');
    assert.equal((await v.loadLink('tickets', alice))!.linkedAt, read.linkedAt, 'the consent time is kept');
    assert.equal(await v.update('tickets', alice, read, { ...tokens, accessToken: 'at-stale' }), false, 'another refresh was stored since');
    const again = (await v.loadLink('tickets', alice))!;
    await v.save('tickets', alice, { ...tokens, accessToken: 'at-new-consent' });
    assert.equal(await v.update('tickets', alice, again, { ...tokens, accessToken: 'at-3' }), false, 'a new consent was stored since');
    assert.equal((await v.load('tickets', alice))?.accessToken, 'at-new-consent');
    const last = (await v.loadLink('tickets', alice))!;
    await v.revoke('tickets', alice);
    assert.equal(await v.update('tickets', alice, last, { ...tokens, accessToken: 'at-4' }), false);
    assert.equal(await v.load('tickets', alice), undefined);
  });

  it('a link opens only while its upstream name stands for the server it was given for (URL, token endpoint)', async () => {
    const store = new MemoryVaultStore();
    const key = randomBytes(32);
    const config = (url: string, tokenEndpoint?: string) =>
      ({ name: 'tickets', transport: 'streamable-http', url, auth: { type: 'user-oauth', clientId: 'c', ...(tokenEndpoint && { authorizationEndpoint: 'https://as.test/authorize', tokenEndpoint }) } }) as unknown as UpstreamConfig;
    let now = config('https://tickets.test/mcp');
    const v = new CredentialVault(key, [], store, (name) => (name === 'tickets' ? vaultAudience(now) : undefined));
    await v.save('tickets', alice, tokens);
    assert.deepEqual(await v.load('tickets', alice), tokens);
    // A reload points the name at another server: its tokens are not handed over; the user consents again.
    now = config('https://elsewhere.test/mcp');
    assert.equal(await v.load('tickets', alice), undefined, 'opened for another URL');
    now = config('https://tickets.test/mcp', 'https://other-as.test/token');
    assert.equal(await v.load('tickets', alice), undefined, 'opened for another token endpoint');
    now = { ...config('https://tickets.test/mcp'), auth: undefined } as unknown as UpstreamConfig;
    assert.equal(await v.load('tickets', alice), undefined, 'opened for an upstream that takes no user links');
    now = config('https://tickets.test/mcp');
    assert.deepEqual(await v.load('tickets', alice), tokens, 'back as it was: opens again');
  });

  it('a link sealed before links were bound (v1) opens, and is sealed again bound to the upstream as configured', async () => {
    const store = new MemoryVaultStore();
    const key = randomBytes(32);
    const upstream = { name: 'tickets', transport: 'streamable-http', url: 'https://tickets.test/mcp', auth: { type: 'user-oauth', clientId: 'c' } } as unknown as UpstreamConfig;
    // A v1 entry, as the vault wrote it before: the user, tenant and upstream name as associated data.
    const iv = randomBytes(12);
    const aes = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'switchboard vault v1: aes-256-gcm', 32));
    const id = createHash('sha256').update('switchboard vault v1: key id').update(key).digest().subarray(0, 4).toString('base64url');
    const c = createCipheriv('aes-256-gcm', aes, iv);
    c.setAAD(Buffer.from(JSON.stringify([alice.issuer, alice.subject, alice.tenant, 'tickets'])));
    const ct = Buffer.concat([c.update(JSON.stringify(tokens)), c.final()]);
    const v1 = ['v1', id, iv.toString('base64url'), ct.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
    await store.put({ user: alice, upstream: 'tickets', linkedAt: 1, expiresAt: tokens.expiresAt, refreshable: true, sealed: v1 });
    const v = new CredentialVault(key, [], store, () => vaultAudience(upstream));
    assert.deepEqual(await v.load('tickets', alice), tokens);
    assert.equal((await store.get('tickets', alice))!.sealed.split('.')[0], 'v2', 'sealed again, bound');
    assert.deepEqual(await v.load('tickets', alice), tokens);
  });

  it('links are metadata only, filtered', async () => {
    const v = new CredentialVault(randomBytes(32), [], new MemoryVaultStore());
    await v.save('tickets', alice, tokens);
    await v.save('tickets', bob, { accessToken: 'at-bob', expiresAt: Date.now() + 1000 });
    const all = await v.links();
    assert.equal(all.length, 2);
    assert.ok(!JSON.stringify(all).includes('secret') && !JSON.stringify(all).includes('at-bob'));
    assert.deepEqual((await v.links({ subject: 'alice' })).map((l) => [l.subject, l.upstream, l.refreshable]), [['alice', 'tickets', true]]);
    assert.equal(JSON.stringify(v), '{"vault":"sealed"}');
  });
});

describe('consent flows', () => {
  it('a flow reference is signed and single-use; a state is single-use and bound to its browser', async () => {
    const f = new ConsentFlows(randomBytes(32), new MemoryVaultStore(), 60_000);
    const ref = await f.create(alice, 'tickets');
    const other = new ConsentFlows(randomBytes(32), new MemoryVaultStore(), 60_000);
    assert.equal(await other.take(ref), undefined, 'signed with another key');
    assert.equal(await f.take(ref.replace(/\..*/, `.${'A'.repeat(43)}`)), undefined, 'forged signature');
    const flow = await f.take(ref);
    assert.deepEqual({ ...flow, at: 0 }, { user: alice, upstream: 'tickets', at: 0 });
    assert.equal(await f.take(ref), undefined, 'used');
    const s = await f.begin(flow!);
    assert.equal(await f.complete(s.state, 'another'), 'other-browser');
    assert.equal(await f.complete(s.state, s.browser), 'unknown', 'spent by the refused attempt');
    const s2 = await f.begin(flow!);
    const done = await f.complete(s2.state, s2.browser);
    assert.ok(typeof done === 'object' && done.user.subject === 'alice' && done.verifier.length === 43);
    assert.equal(await f.complete(s2.state, s2.browser), 'unknown', 'replayed');
  });
});

describe('a consent state record', () => {
  it('holds no PKCE verifier (Redis readers cannot redeem a code they see): it is derived again from the state at the callback', async () => {
    const store = new MemoryVaultStore();
    const f = new ConsentFlows(randomBytes(32), store, 60_000);
    const s = await f.begin({ user: alice, upstream: 'tickets' });
    const stored = (await store.peekOnce('state', s.state))!;
    const done = await f.complete(s.state, s.browser);
    assert.ok(typeof done === 'object');
    assert.ok(!stored.includes(done.verifier), `the verifier is stored: ${stored}`);
    assert.match(done.verifier, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(createHash('sha256').update(done.verifier).digest('base64url'), s.challenge, 'the verifier of the challenge sent');
  });
});

describe('consent flows expire', () => {
  it('a flow or a state past its TTL is gone', async () => {
    const f = new ConsentFlows(randomBytes(32), new MemoryVaultStore(), 1);
    const ref = await f.create(alice, 'tickets');
    const s = await f.begin({ user: alice, upstream: 'tickets' });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await f.take(ref), undefined);
    assert.equal(await f.complete(s.state, s.browser), 'unknown');
  });
});

describe('vault config', () => {
  const base = {
    server: { publicUrl: 'https://gw.test' },
    auth: { mode: 'jwt', issuer: 'https://issuer.test', jwksUrl: 'https://issuer.test/jwks' },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [{ name: 'tickets', transport: 'streamable-http', url: 'https://tickets.test/mcp', sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'gw' } }],
    endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
  };
  it('user-oauth without a vault key is refused; a key that is not 32 bytes is refused', () => {
    assert.throws(() => parseConfig(base), /set vault\.key/);
    assert.throws(() => parseConfig({ ...base, vault: { key: 'short-passphrase-of-some-length-xx' } }), /32 random bytes/);
    assert.equal(parseConfig({ ...base, vault: { key: randomBytes(32).toString('base64') } }).vault.flowTtlMs, 600_000);
  });
  it('user-oauth needs per-user sharing and a public URL', () => {
    const key = randomBytes(32).toString('hex');
    assert.throws(() => parseConfig({ ...base, vault: { key }, upstreams: [{ ...base.upstreams[0], sharing: 'shared' }] }), /needs sharing: per-user/);
    assert.throws(() => parseConfig({ ...base, vault: { key }, server: {} }), /server\.publicUrl/);
  });
});

describe('a link no configured key opens (found by a review)', () => {
  it('is logged once per unknown key (its id, never a key or token): a replica with a wrong vault.key was silent while every user was asked to consent again', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    const store = new MemoryVaultStore();
    const right = randomBytes(32);
    await new CredentialVault(right, [], store).save('tickets', alice, tokens);
    await new CredentialVault(right, [], store).save('tickets', bob, tokens);
    const wrong = new CredentialVault(randomBytes(32), [], store, undefined, undefined, logger);
    for (const user of [alice, bob, alice]) assert.equal(await wrong.load('tickets', user), undefined, 'treated as absent, as before');
    const warned = lines.filter((l) => l.level === 40);
    assert.equal(warned.length, 1, 'once per unknown key');
    assert.match(String(warned[0]!.msg), /no configured vault key opens/);
    assert.equal(typeof warned[0]!.keyId, 'string');
    assert.ok(!JSON.stringify(lines).includes(right.toString('base64')) && !JSON.stringify(lines).includes('secret-alice'));
  });
});
