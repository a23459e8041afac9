// GET /links with the vault in Redis read every link for each page (HGETALL of the one links hash, then
// cut the page in memory): with 100,000 links, each page read them all. It reads a page's worth now: the
// links' fields are kept in a sorted set too (ordered by their bytes, as the pages are), ZRANGEBYLEX gives
// a page's fields and HMGET only their links. Links stored before that index existed are indexed once
// (here: the index deleted, as an earlier release left the store). A real gateway on a redis-server of the
// test's own; Redis's MONITOR counts what each page reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ISSUER, makeKey, PUBLIC_URL } from '../helpers/tokens.js';

const TOKEN = 'admin-token-for-links-pages-0123456789';
const LINKS = 300;
const LIMIT = 7;
type Page = { items: Array<{ upstream: string; issuer: string; subject: string; tenant: string }>; nextCursor?: string };

describe('GET /links pages with the vault in Redis', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;
  let dir: string;
  const keys: string[] = [];
  const key = (l: Page['items'][number]) => `${l.upstream}\n${JSON.stringify([l.issuer, l.subject, l.tenant])}`;
  const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    // This hour's dead-link sweep claimed, as by a replica before: the gateway's sweep at start (retried a second
    // later, then at doubling waits, while its connection is not up) HSCANs the links hash, and on a loaded machine
    // it fell inside the window the first test watches, whose pages must not read the hash whole.
    await raw.set('lp:vault:swept', '1', 'PX', 3_600_000);
    const closed = 'http://127.0.0.1:9'; // never contacted: links are stored directly
    const upstream = (name: string) => ({ name, transport: 'streamable-http' as const, url: `${closed}/mcp`, sharing: 'per-user' as const, pinning: 'off' as const, auth: { type: 'user-oauth' as const, clientId: 'switchboard', authorizationEndpoint: `${closed}/authorize`, tokenEndpoint: `${closed}/token` } });
    dir = mkdtempSync(join(tmpdir(), 'swb-links-pages-'));
    writeFileSync(join(dir, 'key.json'), JSON.stringify((await makeKey('k1')).publicJwk));
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [join(dir, 'key.json')] },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      store: { redis: { url: redis.url, keyPrefix: 'lp:' } },
      vault: { key: Buffer.alloc(32, 7).toString('base64') },
      upstreams: [upstream('ledger'), upstream('wiki')],
      endpoints: [{ path: '/ledger', upstreams: ['ledger'] }, { path: '/wiki', upstreams: ['wiki'] }],
    });
    const vault = gw.app.gateway.consent!.vault;
    for (let i = 0; i < LINKS; i++) {
      // Subjects past U+FFFF too: ordered by bytes, as Redis orders the index.
      const user = { issuer: 'https://issuer.test', subject: i % 10 === 0 ? `u\u{1F600}${i}` : i % 10 === 2 ? `u\uFF01${i}` : `user-${i}`, tenant: i % 3 === 0 ? 'acme' : 'globex' };
      const upstreamName = i % 2 === 0 ? 'ledger' : 'wiki';
      await vault.save(upstreamName, user, { accessToken: `at-${i}`, expiresAt: Date.now() + 600_000 });
      keys.push(`${upstreamName}\n${JSON.stringify([user.issuer, user.subject, user.tenant])}`);
    }
    keys.sort(byBytes);
    // As an earlier release left the store: no ordered index.
    await raw.del('lp:vault:order');
  });
  after(async () => {
    await gw?.close();
    raw?.disconnect();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function all(query: string, limit = LIMIT): Promise<Page[]> {
    const out: Page[] = [];
    let cursor: string | undefined;
    do {
      const res = await fetch(new URL(`/links?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, gw.app.adminUrl!), { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      const page = (await res.json()) as Page;
      out.push(page);
      cursor = page.nextCursor;
      assert.ok(out.length < 1000);
    } while (cursor);
    return out;
  }

  it('following the cursors visits every link once, in byte order, each page reading a page of links', async () => {
    assert.deepEqual((await all('')).flatMap((p) => p.items.map(key)), keys, 'every link once, in order (the index built)');
    const monitor = await raw.monitor();
    const commands: string[][] = [];
    monitor.on('monitor', (_t: string, args: string[]) => commands.push(args));
    try {
      const pages = await all('');
      assert.deepEqual(pages.flatMap((p) => p.items.map(key)), keys);
      await new Promise((r) => setTimeout(r, 100)); // MONITOR's last lines
      const names = commands.map((c) => c[0]!.toLowerCase());
      assert.ok(!names.includes('hgetall') && !names.includes('hscan'), `the links hash is not read whole: ${[...new Set(names)].join(' ')}`);
      const fieldsRead = commands.filter((c) => c[0]!.toLowerCase() === 'hmget' && c[1] === 'lp:vault:links').map((c) => c.length - 2);
      assert.equal(fieldsRead.length, pages.length, 'one HMGET a page');
      assert.ok(fieldsRead.every((n) => n <= LIMIT + 1), `at most a page's links (and one) read per page: ${fieldsRead.join(',')}`);
    } finally {
      monitor.disconnect();
    }
  });

  it('filters narrow the pages, in the same order', async () => {
    const wiki = (await all('&upstream=wiki', 5)).flatMap((p) => p.items.map(key));
    assert.deepEqual(wiki, keys.filter((k) => k.startsWith('wiki\n')));
    const acme = (await all('&tenant=acme', 11)).flatMap((p) => p.items.map(key));
    assert.deepEqual(acme, keys.filter((k) => k.endsWith('"acme"]')));
    const one = (await all('&upstream=ledger&tenant=acme&issuer=https://issuer.test&subject=user-6')).flatMap((p) => p.items.map(key));
    assert.deepEqual(one, [`ledger\n${JSON.stringify(['https://issuer.test', 'user-6', 'acme'])}`]);
  });

  // A replica of the earlier release, still running in a rolling upgrade, writes the hash alone: HSET
  // when a user links, HDEL when a link goes. The pages heal the index without an operator (before, a link
  // so written stayed out of every page, and a link so deleted stayed in the index, until the marker key
  // was deleted by hand).
  it('a link an earlier release wrote or deleted (the hash alone) shows, or goes, at the next pages', async () => {
    const user = { issuer: 'https://issuer.test', subject: 'linked-by-old-replica', tenant: 'acme' };
    await gw.app.gateway.consent!.vault.save('wiki', user, { accessToken: 'at-old', expiresAt: Date.now() + 600_000 });
    const field = `wiki\n${JSON.stringify([user.issuer, user.subject, user.tenant])}`;
    const value = (await raw.hget('lp:vault:links', field))!;
    await raw.multi().hdel('lp:vault:links', field).zrem('lp:vault:order', field).exec();
    await raw.hset('lp:vault:links', field, value); // as the earlier release stored a link: HSET only
    const added = [...keys, field].sort(byBytes);
    assert.deepEqual((await all('')).flatMap((p) => p.items.map(key)), added, 'the link the earlier release wrote is listed');

    const gone = keys[LINKS / 2]!;
    await raw.hdel('lp:vault:links', gone); // as the earlier release deleted a link: HDEL only
    const left = added.filter((k) => k !== gone);
    assert.deepEqual((await all('')).flatMap((p) => p.items.map(key)), left, 'the link the earlier release deleted is not listed');
    assert.equal(await raw.zscore('lp:vault:order', gone), null, 'and the index dropped it');
    assert.equal(await raw.zcard('lp:vault:order'), await raw.hlen('lp:vault:links'));
  });
});
