// search+working-set on two replicas sharing a real redis-server: a tool a 2025 session found with
// search_tools on replica A stays in its tools/list when replica B serves the session, forwarded to A
// while A runs, and taken over by B from the session's record once A has stopped. The record carries each
// found tool's upstream identity (<upstream>__<tool>), not its exposed name: here a renamed tool, whose
// identity and name differ, is listed on B under its name.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openSession, post, type Session } from '../helpers/http-edge.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { messageOf } from '../helpers/tokens.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const META = new Set(['search_tools', 'call_tool']);

describe('search+working-set on two replicas (Redis)', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  let a: RunningGateway | undefined;
  let b: RunningGateway;

  before(async () => {
    redis = await startRedis();
    const config = () => ({
      store: { redis: { url: redis.url, keyPrefix: 'ws-replicas:', heartbeatMs: 200, replicaTtlMs: 1000 } },
      upstreams: [
        { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: [CATALOGUE, '--set', 'files'], sandbox: 'none' as const },
        { name: 'gh', transport: 'stdio' as const, command: process.execPath, args: [CATALOGUE, '--set', 'issues'], sandbox: 'none' as const },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['fs', 'gh'], tools: { exposure: 'search+working-set' as const, overrides: { fs__read_file: { name: 'read_text' } } } }],
    });
    a = await startGateway(config());
    b = await startGateway(config());
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  const rpc = async (gw: RunningGateway, s: Session, id: number, method: string, params: Record<string, unknown>) => {
    const res = await post(gw, { jsonrpc: '2.0', id, method, params }, { sid: s.sid, version: s.version });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const msg = messageOf(res.headers.get('content-type') ?? '', text)!;
    assert.ok(msg.result, text);
    return msg.result;
  };
  const found = async (gw: RunningGateway, s: Session, id: number) =>
    ((await rpc(gw, s, id, 'tools/list', {})).tools as Array<{ name: string }>).map((t) => t.name).filter((n) => !META.has(n));

  it('a tool found on A is listed, and callable by its name, when B serves the session', async () => {
    const s = await openSession(a!);
    assert.deepEqual(await found(a!, s, 2), [], 'nothing found yet');
    const search = await rpc(a!, s, 3, 'tools/call', { name: 'search_tools', arguments: { query: 'read the contents of a file', limit: 1 } });
    assert.deepEqual(search.structuredContent.tools.map((t: { name: string }) => t.name), ['read_text']);
    assert.deepEqual(await found(a!, s, 4), ['read_text']);
    // B while A runs: the request goes to A, the session's owner.
    assert.deepEqual(await found(b, s, 5), ['read_text'], 'B (forwarding to A) lists what A found');
    await a!.close(); // hands its sessions over: B takes this one over from its record
    a = undefined;
    assert.deepEqual(await found(b, s, 6), ['read_text'], 'B, having taken the session over, lists what it found on A');
    const called = await rpc(b, s, 7, 'tools/call', { name: 'read_text', arguments: { path: '/a' } });
    assert.match(called.content[0].text, /^read_file /);
  });
});
