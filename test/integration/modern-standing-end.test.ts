// A 2026-07-28 client's standing can end while its calls run: an operator ends it (admin API), a reload
// takes its tenant's grant away or removes the endpoint, the gateway stops. A 2025 session's requests
// in flight are then answered with an error; a modern call must be answered too, not left with an open
// POST that never gets its response, and one that does not invite a plain resend of a call that ran (before
// 2026-12-06 both answers said "send it again").
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { MODERN_VERSION } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

function slowGateway(): Promise<RunningGateway> {
  return startGateway({
    upstreams: [{ name: 'slow', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [LABEL, '--label', 'v1'], sharing: 'shared', pool: { size: 1 } }],
    endpoints: [{ path: '/mcp', upstreams: ['slow'] }],
  });
}

/** A modern tools/call of a minute-long sleep, and its answer (status and body text) once it comes. */
function longCall(gw: RunningGateway, signal: AbortSignal): Promise<{ status: number; text: string }> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'sleep' };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'long-1', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000 }, _meta } });
  return fetch(gw.url('/mcp'), { method: 'POST', headers, body, signal }).then(async (r) => ({ status: r.status, text: await r.text() }));
}

/** The JSON-RPC response of an answer (a JSON body, or an SSE stream's last message). */
function responseOf(answered: { text: string }): any {
  const last = answered.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).pop() ?? answered.text;
  return JSON.parse(last);
}

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<undefined>((r) => setTimeout(r, ms, undefined))]);

describe('2026-07-28: a standing ended while a call runs', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await slowGateway();
  });
  after(() => gw.close());

  it('answers the call with an error carrying its id, and stops it upstream', async () => {
    const pool = gw.app.gateway.pools.get('slow')!;
    const ac = new AbortController();
    const call = longCall(gw, ac.signal);
    try {
      await until('the call reached the upstream', () => pool.inflight === 1, 10_000);
      const standing = gw.app.gateway.modern.sessions.list()[0]!;
      assert.equal(await gw.app.gateway.modern.sessions.end(standing.id), true);
      const answered = await within(call, 10_000);
      assert.ok(answered, 'the POST was answered within 10 s');
      const response = responseOf(answered);
      assert.equal(response.id, 'long-1', answered.text);
      assert.equal(response.error?.data?.code, 'SWB_SESSION_CLOSED', answered.text);
      // The call ran upstream: the answer must not tell the client to send it again as if it had not (a
      // tools/call that sent a payment, run twice).
      assert.match(response.error.message, /may have taken effect/, answered.text);
      await until('the upstream call ended', () => pool.inflight === 0, 10_000);
    } finally {
      ac.abort();
    }
  });
});

describe('2026-07-28: the gateway stops while a call runs', () => {
  it('answers the call with SWB_SHUTTING_DOWN', async () => {
    const gw = await slowGateway();
    const ac = new AbortController();
    try {
      const call = longCall(gw, ac.signal);
      await until('the call reached the upstream', () => gw.app.gateway.pools.get('slow')!.inflight === 1, 10_000);
      const [answered] = await Promise.all([within(call.catch((err: Error) => ({ status: 0, text: String(err) })), 10_000), gw.close()]);
      assert.ok(answered, 'the POST was answered within 10 s');
      const response = responseOf(answered);
      assert.equal(response.id, 'long-1', answered.text);
      assert.equal(response.error?.data?.code, 'SWB_SHUTTING_DOWN', answered.text);
      assert.match(response.error.message, /may have taken effect/, answered.text);
    } finally {
      ac.abort();
    }
  });
});
