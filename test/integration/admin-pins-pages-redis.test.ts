// GET /pins with the pins in Redis read every upstream's pins for each page (two HGETALLs per upstream,
// then cut the page in memory). A page reads the upstreams in key order now, one at a time, until it is
// full: an upstream's pins are hashes with no order to read a part of them by, bounded by
// MAX_TOOLS_PER_UPSTREAM (1000 names per upstream). A real gateway on a redis-server of the test's own,
// pending changes stored as replicas leave them; Redis's MONITOR says which upstreams a page read.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ISSUER, makeKey, PUBLIC_URL } from '../helpers/tokens.js';

const TOKEN = 'admin-token-for-pins-pages-0123456789';
// In key order (by the name quoted as JSON: "up" before "up-b" before "upx").
const UPSTREAMS = ['up', 'up-b', 'up-c', 'upx', 'x'];
const PER_UPSTREAM = 12;
type Page = { items: Array<{ upstream: string; tool: string; approvedHash: string | null }>; nextCursor?: string };

describe('GET /pins pages with the pins in Redis', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;
  let dir: string;
  const keys: string[] = [];

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    dir = mkdtempSync(join(tmpdir(), 'swb-pins-pages-'));
    writeFileSync(join(dir, 'key.json'), JSON.stringify((await makeKey('k1')).publicJwk));
    const closed = 'http://127.0.0.1:9'; // never contacted: per-user upstreams start with a user's first call
    const upstream = (name: string) => ({ name, transport: 'streamable-http' as const, url: `${closed}/mcp`, sharing: 'per-user' as const, auth: { type: 'user-oauth' as const, clientId: 'switchboard', authorizationEndpoint: `${closed}/authorize`, tokenEndpoint: `${closed}/token` } });
    for (const u of UPSTREAMS) {
      for (let i = 0; i < PER_UPSTREAM; i++) {
        const tool = `tool-${i}`;
        await raw.hset(`pp:pins:${u}:pending`, tool, JSON.stringify({ hash: 'b'.repeat(64), summary: `${u} ${tool}`, firstSeen: new Date().toISOString() }));
        if (i % 2 === 0) await raw.hset(`pp:pins:${u}`, tool, 'a'.repeat(64));
        keys.push(JSON.stringify([u, tool]));
      }
    }
    keys.sort();
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [join(dir, 'key.json')] },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      store: { redis: { url: redis.url, keyPrefix: 'pp:' } },
      vault: { key: Buffer.alloc(32, 7).toString('base64') },
      upstreams: UPSTREAMS.map(upstream),
      endpoints: UPSTREAMS.map((u) => ({ path: `/${u}`, upstreams: [u] })),
    });
  });
  after(async () => {
    await gw?.close();
    raw?.disconnect();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get = async (query: string): Promise<Page> => {
    const res = await fetch(new URL(`/pins?${query}`, gw.app.adminUrl!), { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as Page;
  };

  it('a page reads the upstreams it reaches only, and the cursors visit every pending change once, in order', async () => {
    const monitor = await raw.monitor();
    const read = new Set<string>();
    monitor.on('monitor', (_t: string, args: string[]) => {
      if (args[0]!.toLowerCase().startsWith('h')) read.add(args[1]!);
    });
    try {
      const first = await get('limit=5');
      assert.deepEqual(first.items.map((p) => JSON.stringify([p.upstream, p.tool])), keys.slice(0, 5));
      await new Promise((r) => setTimeout(r, 100)); // MONITOR's last lines
      assert.deepEqual([...read].sort(), ['pp:pins:up', 'pp:pins:up:pending'], 'only the first upstream read');
    } finally {
      monitor.disconnect();
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await get(`limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.items.map((p) => JSON.stringify([p.upstream, p.tool])));
      cursor = page.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, keys, 'every pending change once, in key order');
    assert.equal((await get('limit=1')).items[0]!.approvedHash, 'a'.repeat(64));
  });
});
