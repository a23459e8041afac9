// GET /sessions, /pins and /links answered everything at once: with 100,000 sessions in Redis, one huge
// answer built in one long loop. They page now: ?limit= (default 100, at most 1000; anything else 400)
// and an opaque nextCursor while more remain, in an order that is the same on every replica (by key),
// so following the cursors, page by page on alternating replicas, visits each item once. Real gateways:
// one in memory (sessions, pins from its pins file, links in its vault), two processes on a redis-server
// of the test's own, with session records stored as a replica that died leaves them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RAW_HEADERS, RAW_INIT } from '../helpers/raw-mcp.js';
import { adminReplicaPair } from '../helpers/replicas.js';
import { plantOrphan, sessionRecord } from '../helpers/session-record.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken } from '../helpers/tokens.js';

type Answer = { status: number; body: { items?: Array<Record<string, unknown>>; nextCursor?: string; error?: { code: string; message: string } } };

async function get(admin: string, path: string, token?: string): Promise<Answer> {
  const res = await fetch(new URL(path, admin), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** Every page of `path` (limit `limit`), each from the next admin URL in turn; each page's items. */
async function pages(admins: string[], path: string, limit: number, token?: string): Promise<Array<Array<Record<string, unknown>>>> {
  const out: Array<Array<Record<string, unknown>>> = [];
  let cursor: string | undefined;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await get(admins[out.length % admins.length]!, `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.items!.length <= limit, `a page holds at most ${limit}`);
    out.push(r.body.items!);
    cursor = r.body.nextCursor;
    assert.ok(cursor === undefined || r.body.items!.length === limit, 'a page before the last is full');
    assert.ok(out.length < 1000, 'the cursors end');
  } while (cursor !== undefined);
  return out;
}

const TOKEN = 'admin-token-for-paging-tests-0123456789';
const VAULT_KEY = Buffer.alloc(32, 5).toString('base64');
const SESSIONS = 13;
const PINS = 11;
const LINKS = 9;

describe('admin API list paging (memory store)', () => {
  let dir: string;
  let gw: RunningGateway;
  let admin: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-paging-'));
    const pending = Object.fromEntries(Array.from({ length: PINS }, (_, i) => [`tool-${String(i).padStart(2, '0')}`, { pending: { hash: 'a'.repeat(63) + (i % 10), summary: `t${i}`, firstSeen: new Date().toISOString() } }]));
    writeFileSync(join(dir, 'pins.json'), JSON.stringify({ version: 1, upstreams: { fx: pending } }));
    // Never contacted: links are stored directly, no consent runs (port 9, discard).
    const closed = 'http://127.0.0.1:9';
    const key = await makeKey('k1');
    writeFileSync(join(dir, 'key.json'), JSON.stringify(key.publicJwk));
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [join(dir, 'key.json')] },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      vault: { key: VAULT_KEY },
      pinning: { file: join(dir, 'pins.json') },
      upstreams: [
        { name: 'fx', transport: 'stdio', ...FIXTURE },
        { name: 'ledger', transport: 'streamable-http', url: `${closed}/mcp`, sharing: 'per-user', pinning: 'off', auth: { type: 'user-oauth', clientId: 'switchboard', authorizationEndpoint: `${closed}/authorize`, tokenEndpoint: `${closed}/token` } },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }, { path: '/ledger', upstreams: ['ledger'] }],
    });
    admin = gw.app.adminUrl!;
    for (let i = 0; i < SESSIONS; i++) {
      const authorization = `Bearer ${await signToken(key, { sub: `client-${i}` })}`;
      const r = await fetch(gw.url('/mcp'), { method: 'POST', headers: { ...RAW_HEADERS, authorization }, body: JSON.stringify(RAW_INIT) });
      await r.body?.cancel();
      assert.equal(r.status, 200);
    }
    const vault = gw.app.gateway.consent!.vault;
    for (let i = 0; i < LINKS; i++) await vault.save('ledger', { issuer: 'https://issuer.test', subject: `user-${i}`, tenant: 'acme' }, { accessToken: `at-${i}`, expiresAt: Date.now() + 600_000 });
  });
  after(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('pages sessions, pins and links: each item once, in the same order as one page holding them all', async () => {
    const lists = [
      { path: '/sessions', total: SESSIONS, key: (x: Record<string, unknown>) => String(x.id) },
      { path: '/pins', total: PINS, key: (x: Record<string, unknown>) => `${x.upstream}/${x.tool}` },
      { path: '/links', total: LINKS, key: (x: Record<string, unknown>) => `${x.upstream}/${x.subject}` },
    ];
    for (const { path, total, key } of lists) {
      const all = await get(admin, path, TOKEN);
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.equal(all.body.items!.length, total, `${path}: under the default limit, one page`);
      assert.equal(all.body.nextCursor, undefined, `${path}: nothing more`);
      const paged = await pages([admin], path, 4, TOKEN);
      assert.equal(paged.length, Math.ceil(total / 4), path);
      assert.deepEqual(paged.flat().map(key), all.body.items!.map(key), `${path}: the pages are the one answer, cut`);
      assert.equal(new Set(paged.flat().map(key)).size, total, `${path}: each once`);
    }
    // The pins' definitions and diff are still there.
    assert.deepEqual(Object.keys((await get(admin, '/pins?limit=1', TOKEN)).body.items![0]!).sort(), ['approvedHash', 'diff', 'findings', 'firstSeen', 'new', 'old', 'pendingHash', 'rejected', 'summary', 'tool', 'upstream']);
    // A filter narrows the pages too.
    assert.deepEqual((await pages([admin], '/links?subject=user-3', 1, TOKEN)).flat().map((l) => l.subject), ['user-3']);
  });

  it('refuses a limit that is not a whole number from 1 to 1000, and a cursor it did not give, in the API error shape', async () => {
    for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'limit=2.5', 'limit=', 'limit=-1', 'limit=1&limit=2', 'cursor=', 'cursor=%%%', 'cursor=bm90LWEtY3Vyc29y']) {
      for (const path of ['/sessions', '/pins', '/links']) {
        const r = await get(admin, `${path}?${q}`, TOKEN);
        assert.equal(r.status, 400, `${path}?${q}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error!.code, 'bad_request');
        assert.match(r.body.error!.message, q.startsWith('limit') ? /\?limit= .*1 to 1000/ : /\?cursor=/, `${path}?${q}`);
      }
    }
    // A cursor of one list is not one of another.
    const cursor = (await get(admin, '/sessions?limit=1', TOKEN)).body.nextCursor!;
    assert.equal((await get(admin, `/pins?cursor=${encodeURIComponent(cursor)}`, TOKEN)).status, 400);
    assert.equal((await get(admin, '/sessions?limit=1000', TOKEN)).status, 200, 'the maximum is allowed');
  });
});

const STORED = 230;

describe('admin API session paging across replicas (Redis)', { timeout: 180_000 }, () => {
  const pair = adminReplicaPair(TOKEN);
  const live: string[] = [];
  const stored: string[] = [];
  before(async () => {
    for (const r of [pair.a, pair.b, pair.a]) {
      const res = await fetch(new URL('/mcp', r.base), { method: 'POST', headers: RAW_HEADERS, body: JSON.stringify(RAW_INIT) });
      await res.body?.cancel();
      assert.equal(res.status, 200);
      live.push(res.headers.get('mcp-session-id')!);
    }
    // Sessions of a replica that is gone: listed from their records.
    const redis = new Redis(pair.redis.url);
    try {
      for (let i = 0; i < STORED; i++) {
        const record = sessionRecord();
        await plantOrphan(redis, 'swb:', record);
        stored.push(record.id);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('pages on alternating replicas visit every session once, live and stored, in id order', async () => {
    const paged = (await pages([pair.a.admin!, pair.b.admin!], '/sessions', 17, TOKEN)).flat();
    const ids = paged.map((s) => String(s.id));
    assert.equal(new Set(ids).size, ids.length, 'no session twice');
    assert.deepEqual([...ids].sort(), [...live, ...stored].sort(), 'every session');
    assert.deepEqual(ids, [...ids].sort(), 'in id order');
    for (const id of live) assert.notEqual(paged.find((s) => s.id === id)!.inflight, null, `${id}: its holder's row, not its record's`);
    const first = await get(pair.b.admin!, '/sessions', TOKEN);
    assert.equal(first.body.items!.length, 100, 'the default limit');
    assert.ok(first.body.nextCursor);
    assert.deepEqual(first.body.items!.map((s) => s.id), ids.slice(0, 100));
    assert.equal((await get(pair.a.admin!, '/sessions?limit=1001', TOKEN)).status, 400);
  });
});
