// The tenant session limit as a client that never sends DELETE meets it: the 429 at the limit says,
// in Retry-After, when the tenant's first session expires (its last use + session.idleTimeoutMs), and
// once that moment has passed a new session is accepted. With the memory store (one gateway) and with
// Redis (two gateways: the session that expires first lives on the other replica). Real HTTP, a real
// stdio upstream, a real redis-server; the values are compared, not how fast anything happened.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { initializeBody, mcpRequest, type RpcReply } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';

const IDLE_MS = 3000;
const CAP = 2;

function config(extra: Record<string, unknown> = {}) {
  return {
    // Auth off: every request is tenant "anonymous", whose limits these are.
    tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: CAP } }],
    session: { idleTimeoutMs: IDLE_MS },
    upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    ...extra,
  };
}

/** A session opened and left without DELETE, with the span of wall time its last use fell in. */
interface Left {
  gw: RunningGateway;
  sid: string;
  usedFrom: number;
  usedTo: number;
}

async function openAndLeave(gw: RunningGateway): Promise<Left> {
  const usedFrom = Date.now();
  const init = await mcpRequest(gw, initializeBody());
  assert.equal(init.status, 200, init.text);
  const sid = init.headers.get('mcp-session-id')!;
  const ack = await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid });
  assert.equal(ack.status, 202, ack.text);
  return { gw, sid, usedFrom, usedTo: Date.now() };
}

/** An initialize at the limit, with the span of wall time it was answered in. */
async function refusedInitialize(gw: RunningGateway): Promise<{ reply: RpcReply; from: number; to: number }> {
  const from = Date.now();
  const reply = await mcpRequest(gw, initializeBody());
  return { reply, from, to: Date.now() };
}

/**
 * Retry-After must be the whole seconds until `first` expires: its expiry lies between its last use's
 * span + the idle timeout, and the refusal was answered between `from` and `to`. Redis counts on its own
 * clock (the same machine's here), hence a few ms of slack.
 */
function assertRetryAfterMatches(refusal: Awaited<ReturnType<typeof refusedInitialize>>, first: Left): number {
  const { reply } = refusal;
  assert.equal(reply.status, 429, reply.text);
  const header = reply.headers.get('retry-after');
  assert.match(header ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
  const seconds = Number(header);
  const earliest = first.usedFrom + IDLE_MS - refusal.to - 50;
  const latest = first.usedTo + IDLE_MS - refusal.from + 50;
  assert.ok(seconds >= Math.max(1, Math.ceil(earliest / 1000)) && seconds <= Math.max(1, Math.ceil(latest / 1000)), `Retry-After ${seconds} s for an expiry ${earliest}..${latest} ms away`);
  assert.match(String(reply.json?.error?.message), new RegExp(`first to expire does so in ${seconds} s`));
  assert.equal(reply.headers.get('mcp-session-id'), null);
  return seconds;
}

/**
 * Polls initialize until one is accepted (the first session expired), each refusal telling no later a
 * time; `use` runs at each poll (a client still working with its session).
 */
async function acceptedAfterExpiry(gw: RunningGateway, retryAfter: number, use?: () => Promise<void>): Promise<string> {
  let sid: string | undefined;
  let last = retryAfter;
  await waitFor(
    async () => {
      await use?.();
      const r = await mcpRequest(gw, initializeBody());
      if (r.status === 200) return (sid = r.headers.get('mcp-session-id')!);
      assert.equal(r.status, 429, r.text);
      const s = Number(r.headers.get('retry-after'));
      assert.ok(s <= last, `Retry-After went from ${last} to ${s} s`);
      last = s;
      return undefined;
    },
    { timeoutMs: retryAfter * 1000 + 5000, intervalMs: 100 },
  );
  assert.ok(sid, `a session accepted within ${retryAfter} s and a margin`);
  return sid;
}

async function ping(gw: RunningGateway, sid: string): Promise<number> {
  return (await mcpRequest(gw, { jsonrpc: '2.0', id: 7, method: 'ping' }, { sid })).status;
}

async function end(gw: RunningGateway, sid: string): Promise<void> {
  await mcpRequest(gw, undefined, { method: 'DELETE', sid });
}

describe('tenant session limit: Retry-After is the next expiry', { timeout: 60_000 }, () => {
  describe('memory store', () => {
    let gw: RunningGateway;
    before(async () => {
      gw = await startGateway(config());
    });
    after(() => gw?.close());

    it('the 429 names when the first session expires; after that a new session is accepted', async () => {
      const first = await openAndLeave(gw);
      const second = await openAndLeave(gw);
      const seconds = assertRetryAfterMatches(await refusedInitialize(gw), first);
      // The legacy transport meets the same limit with the same answer.
      const sse = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5000) });
      assert.equal(sse.status, 429);
      assert.ok(Math.abs(Number(sse.headers.get('retry-after')) - seconds) <= 1, `SSE Retry-After ${sse.headers.get('retry-after')} vs ${seconds}`);
      await sse.body?.cancel();

      const third = await acceptedAfterExpiry(gw, seconds);
      assert.equal(await ping(gw, first.sid), 404, 'the first session is the one that expired');
      assert.equal(await ping(gw, third), 200);
      for (const sid of [second.sid, third]) await end(gw, sid);
    });

    it('a session in use is not the one to expire: each use moves its expiry', async () => {
      const used = await openAndLeave(gw);
      const left = await openAndLeave(gw);
      const keepUsing = async () => assert.equal(await ping(gw, used.sid), 200);
      await keepUsing();
      const seconds = assertRetryAfterMatches(await refusedInitialize(gw), left);
      const fresh = await acceptedAfterExpiry(gw, seconds, keepUsing);
      assert.equal(await ping(gw, left.sid), 404, 'the session left alone expired');
      assert.equal(await ping(gw, used.sid), 200, 'the session in use lives on');
      for (const sid of [used.sid, fresh]) await end(gw, sid);
    });
  });

  describe('Redis store, two replicas', () => {
    let redis: TestRedis;
    const gws: RunningGateway[] = [];
    before(async () => {
      redis = await startRedis();
      for (let i = 0; i < 2; i++) gws.push(await startGateway(config({ store: { redis: { url: redis.url, keyPrefix: 'slots-test:', heartbeatMs: 200, replicaTtlMs: 1000 } } })));
    });
    after(async () => {
      for (const gw of gws) await gw.close();
      await redis?.stop();
    });

    it("the 429 on one replica names the expiry of a session held by the other; after it a session is accepted", async () => {
      const [a, b] = gws as [RunningGateway, RunningGateway];
      const first = await openAndLeave(b);
      const second = await openAndLeave(a);
      const seconds = assertRetryAfterMatches(await refusedInitialize(a), first);
      const third = await acceptedAfterExpiry(a, seconds, async () => assert.equal(await ping(a, second.sid), 200));
      assert.equal(await ping(b, first.sid), 404, "the other replica's session is the one that expired");
      assert.equal(await ping(a, second.sid), 200);
      for (const sid of [second.sid, third]) await end(a, sid);
    });
  });
});
