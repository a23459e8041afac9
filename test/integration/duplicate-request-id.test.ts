// A 2025 client that sends a request reusing the id of one of its own requests still in flight (a ping id 7
// while its tools/call id 7 runs). JSON-RPC and MCP ask for unique ids, but bad input gets a clear error and
// loses nothing: the duplicate is refused with -32600 and the original is answered (or cancelled) as if the
// duplicate never came. Over legacy HTTP+SSE a ping went past the duplicate check and was answered {} as id
// 7: the client took that for its call's answer, and the call's real answer came for an id no longer pending.
// Found by a review.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RAW_HEADERS, rawSession } from '../helpers/raw-mcp.js';
import { until } from '../helpers/wait.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const HOLD = { jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: 'hold', arguments: {} } };
const RELEASE = { jsonrpc: '2.0' as const, id: 8, method: 'tools/call', params: { name: 'release', arguments: {} } };

type Answer = { id?: unknown; result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } };

/** A legacy HTTP+SSE session driven with the SDK's transport alone: every message it gets is kept, ids as sent. */
async function legacySession(gw: RunningGateway): Promise<{ send(m: object): Promise<void>; got: Answer[]; close(): Promise<void> }> {
  const t = new SSEClientTransport(gw.url('/sse'));
  const got: Answer[] = [];
  t.onmessage = (m) => void got.push(m as Answer);
  await t.start();
  await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'dup', version: '1' } } });
  await until('the initialize answer', () => got.some((m) => m.id === 1));
  await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { send: (m) => t.send(m as JSONRPCMessage), got, close: () => t.close() };
}

describe('a request reusing the id of one in flight', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'held', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'hold'], sandbox: 'none' }],
      endpoints: [{ path: '/mcp', upstreams: ['held'] }],
    });
  });
  after(() => gw.close());
  const inflight = () => gw.app.gateway.registry.inflight;

  for (const dup of ['ping', 'tools/list']) {
    it(`legacy HTTP+SSE: a ${dup} id 7 during tools/call id 7 is refused -32600, the call answered`, async () => {
      const s = await legacySession(gw);
      try {
        await s.send(HOLD);
        await until('the call to be in flight', () => inflight() === 1);
        await s.send({ jsonrpc: '2.0', id: 7, method: dup });
        await until('the duplicate to be answered', () => s.got.some((m) => m.id === 7));
        const first = s.got.find((m) => m.id === 7)!;
        assert.equal(first.error?.code, -32600, `the duplicate was answered ${JSON.stringify(first)}`);
        assert.match(first.error.message, /id 7 is already in use/);
        await s.send(RELEASE);
        await until('both calls answered', () => s.got.filter((m) => m.id === 7).length === 2 && s.got.some((m) => m.id === 8));
        assert.equal(s.got.filter((m) => m.id === 7)[1]!.result?.content?.[0]?.text, 'released');
      } finally {
        await s.close();
      }
    });
  }

  it('legacy HTTP+SSE 2025-03-26: a batch of tools/call id 7 and ping id 7 refuses the ping, answers the call', async () => {
    const s = await legacySession(gw);
    try {
      await s.send([HOLD, { jsonrpc: '2.0', id: 7, method: 'ping' }]);
      await until('the duplicate to be answered', () => s.got.some((m) => m.id === 7));
      assert.equal(s.got.find((m) => m.id === 7)!.error?.code, -32600);
      await until('the call to be in flight', () => inflight() === 1);
      await s.send(RELEASE);
      await until('both calls answered', () => s.got.filter((m) => m.id === 7).length === 2 && s.got.some((m) => m.id === 8));
      assert.equal(s.got.filter((m) => m.id === 7)[1]!.result?.content?.[0]?.text, 'released');
    } finally {
      await s.close();
    }
  });

  it('legacy HTTP+SSE: notifications/cancelled for id 7 after a refused duplicate still cancels the call', async () => {
    const s = await legacySession(gw);
    try {
      await s.send(HOLD);
      await until('the call to be in flight', () => inflight() === 1);
      await s.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
      await until('the duplicate to be answered', () => s.got.some((m) => m.id === 7));
      await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'test' } });
      await until('the call to be cancelled', () => inflight() === 0);
      assert.equal(s.got.filter((m) => m.id === 7).length, 1, 'a cancelled call is not answered');
    } finally {
      await s.close();
    }
  });

  it('Streamable HTTP: a ping id 7 during tools/call id 7 is refused 400 -32600, the call answered', async () => {
    const sid = await rawSession(gw.base);
    const headers = { ...RAW_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const post = (body: object) => fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify(body) });
    const call = post(HOLD).then((r) => r.text());
    await until('the call to be in flight', () => inflight() === 1);
    const dup = await post({ jsonrpc: '2.0', id: 7, method: 'ping' });
    const refused = (await dup.json()) as Answer;
    assert.equal(dup.status, 400);
    assert.equal(refused.error?.code, -32600);
    assert.equal(refused.id, 7);
    assert.equal((await post(RELEASE)).status, 200);
    assert.match(await call, /"id":7,"result":\{"content":\[\{"type":"text","text":"released"/);
  });

  it('Streamable HTTP 2025-03-26: a batch of two requests of one id is refused 400 -32600 and runs neither', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'dup', version: '1' } } };
    const started = await fetch(gw.url(), { method: 'POST', headers: RAW_HEADERS, body: JSON.stringify(init) });
    const sid = started.headers.get('mcp-session-id')!;
    await started.text();
    const headers = { ...RAW_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' };
    await (await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
    const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify([HOLD, { ...HOLD }]) });
    const body = (await res.json()) as Answer;
    assert.equal(res.status, 400);
    assert.equal(body.error?.code, -32600);
    assert.equal(inflight(), 0, 'neither call of the refused batch runs');
  });
});
