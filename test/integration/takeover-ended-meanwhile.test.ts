// A session ended on the replica taking it over while the copy there is still being rebuilt (its upstream
// subscription renewal held by a gate file). The rebuild carried on as if nothing had happened: ACTIVE,
// counted among the active sessions after its close had run (switchboard_sessions_active stayed +1), and
// a copy handed back by a shutdown meanwhile was answered 404, though another replica could resume it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { SHUTDOWN_REASON } from '../../src/session/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

const GATED = join(import.meta.dirname, '..', 'fixtures', 'gated-server.mjs');
const PREFIX = 'rebuilt-test:';

describe('a session ended while another replica rebuilds it', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let raw: Redis;
  let dir: string;
  const gateways: RunningGateway[] = [];
  const start = async (gate: string, logLines?: string[]) => {
    const gw = await startGateway(
      {
        store: { redis: { url: redis.url, keyPrefix: PREFIX, heartbeatMs: 200, replicaTtlMs: 1000 } },
        admin: { enabled: true, port: 0 },
        upstreams: [{ name: 'gated', transport: 'stdio', command: process.execPath, args: [GATED, '--gate', gate, '--hold', 'resources/subscribe'], sandbox: 'none', sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['gated'] }],
      },
      { logLines },
    );
    gateways.push(gw);
    return gw;
  };

  before(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    dir = mkdtempSync(join(tmpdir(), 'swb-rebuilt-'));
  });
  after(async () => {
    for (const f of ['b1', 'b2']) if (!existsSync(join(dir, f))) writeFileSync(join(dir, f), '');
    for (const gw of gateways.reverse()) await gw.close().catch(() => {});
    raw?.disconnect();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A session subscribed on `a`, handed over, and a request for it on `b`, whose rebuild waits at the renewal upstream. */
  async function heldTakeover(bGate: string, logLines: string[]) {
    const open = join(dir, 'open');
    writeFileSync(open, '');
    const a = await start(open);
    const b = await start(bGate, logLines);
    const s = await openSession(a);
    const sub = await post(a, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'gated://watched' } }, { sid: s.sid, version: s.version });
    assert.equal(sub.status, 200, await sub.text());
    await until('the subscription is in the session record', async () => ((await raw.get(`${PREFIX}session:${s.sid}`)) ?? '').includes('gated://watched'));
    await a.close(); // hands its sessions over: the next request anywhere takes this one over
    const answer = post(b, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { sid: s.sid, version: s.version });
    await until('b renews the subscription upstream', () => existsSync(`${bGate}.asked`));
    return { b, s, answer };
  }

  it('by an operator (DELETE /sessions/:id): closed once, answered 404, and no longer counted active', async () => {
    const logLines: string[] = [];
    const gate = join(dir, 'b1');
    const { b, s, answer } = await heldTakeover(gate, logLines);
    const ended = await fetch(new URL(`/sessions/${s.sid}`, b.app.adminUrl), { method: 'DELETE' });
    assert.ok(ended.ok, `DELETE /sessions/${s.sid}: HTTP ${ended.status}`);
    writeFileSync(gate, '');
    const res = await answer;
    assert.equal(res.status, 404, await res.text());
    const closed = logLines.filter((l) => l.includes('"msg":"session closed"') && l.includes(s.sid));
    assert.equal(closed.length, 1, `closed ${closed.length} times:\n${closed.join('')}`);
    const metrics = await (await fetch(b.app.metricsUrl!)).text();
    const active = /^switchboard_sessions_active\{[^}]*transport="streamable-http"[^}]*\} (\d+)$/m.exec(metrics)?.[1];
    assert.equal(active ?? '0', '0', 'the ended session is still counted active');
    assert.ok(!logLines.some((l) => l.includes('session taken over from another replica')), 'an ended session reported as taken over');
  });

  it('by a shutdown (handed back): answered 503, and the next replica asked resumes it', async () => {
    const gate = join(dir, 'b2');
    const { b, s, answer } = await heldTakeover(gate, []);
    // What the gateway's shutdown does to each of its sessions (SessionRegistry.closeAll).
    await b.app.gateway.registry.get(s.sid)!.close(SHUTDOWN_REASON);
    writeFileSync(gate, '');
    const res = await answer;
    assert.equal(res.status, 503, await res.text());
    assert.ok(res.headers.get('retry-after'), 'no Retry-After');
    const c = await start(join(dir, 'open'));
    const retried = await post(c, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid: s.sid, version: s.version });
    assert.equal(retried.status, 200, await retried.text());
  });
});
