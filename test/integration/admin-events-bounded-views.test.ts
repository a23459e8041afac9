// The console's /events sessions view held every open session: with 100,000 sessions in Redis, each tick
// (every 2 s) read every session record from the store and built one huge view, blocking the event loop.
// It holds the first CONSOLE_SESSIONS by id now (GET /sessions' order) and the nextCursor to page on with
// GET /sessions; the store's records read for it are a page's. A real gateway on a redis-server of the
// test's own, its store holding many sessions of a replica that is gone; Redis's MONITOR counts the reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { CONSOLE_SESSIONS } from '../../src/admin/admin-events.js';
import { events } from '../helpers/admin-events.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/session-record.js';
import { until } from '../helpers/wait.js';

const STORED = 3 * CONSOLE_SESSIONS + 50;

describe('admin /events: the sessions view with many sessions in Redis', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let gw: RunningGateway;
  const ids: string[] = [];
  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    const batch = raw.pipeline();
    for (let i = 0; i < STORED; i++) {
      const record = sessionRecord();
      ids.push(record.id);
      batch.set(`bv:session:${record.id}`, JSON.stringify(record), 'PX', 600_000).set(`bv:owner:${record.id}`, 'ghost', 'PX', 600_000);
    }
    await batch.exec();
    ids.sort();
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      store: { redis: { url: redis.url, keyPrefix: 'bv:' } },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it('holds the first page by id with a cursor to the rest, reading only that page of records', async () => {
    const monitor = await raw.monitor();
    const read = new Set<string>();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'mget') for (const k of args.slice(1)) if (k.startsWith('bv:session:')) read.add(k);
    });
    const admin = gw.app.adminUrl!;
    const { status, stream, body } = await events(admin, null);
    assert.equal(status, 200, body);
    try {
      await until('the sessions view', () => stream!.seen.some((e) => e.event === 'sessions'));
      const view = stream!.seen.find((e) => e.event === 'sessions')!.data;
      assert.equal(view.items.length, CONSOLE_SESSIONS, 'a page, not every session');
      assert.deepEqual(view.items.map((s: { id: string }) => s.id), ids.slice(0, CONSOLE_SESSIONS), 'the first by id');
      assert.equal(view.limit, CONSOLE_SESSIONS);
      // The console pages on with the API, from the view's cursor.
      const next = await fetch(new URL(`/sessions?limit=${CONSOLE_SESSIONS}&cursor=${encodeURIComponent(view.nextCursor)}`, admin));
      const page = (await next.json()) as { items: Array<{ id: string }> };
      assert.deepEqual(page.items.map((s) => s.id), ids.slice(CONSOLE_SESSIONS, 2 * CONSOLE_SESSIONS));
      await new Promise((r) => setTimeout(r, 100)); // MONITOR's last lines
      const pageReads = [...read].filter((k) => ids.indexOf(k.slice('bv:session:'.length)) < 2 * CONSOLE_SESSIONS + 1);
      assert.ok(read.size > 0, 'the records were read through MGET');
      assert.equal(read.size, pageReads.length, `records read beyond the two pages: ${read.size - pageReads.length}`);
    } finally {
      stream!.close();
      monitor.disconnect();
    }
  });
});
