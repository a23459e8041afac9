// A 2025-03-26 batch reusing one request id (or a request reusing the id of one in flight) is refused
// with 400, and the refusal's message, which the edge also logs at info ("request refused"), quoted that
// id whole. A string id is the client's, of any length up to server.maxBodyBytes: a 4 MiB POST made a
// 2 MiB log line, where every other client-chosen text the gateway logs (clientInfo, a tool name, a
// Content-Encoding, an MCP-Protocol-Version) is cut first. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLoggedFixtureGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('a refused request id in the log', () => {
  it('a batch using one long string id twice: 400 echoing the id, its message and log line cut', async () => {
    const lines: string[] = [];
    const gw = await startLoggedFixtureGateway(lines);
    try {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      const started = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: JSON.stringify(init) });
      const session = started.headers.get('mcp-session-id')!;
      await started.text();
      const headers = { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' };
      await (await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
      const id = `dup-${'x'.repeat(1024 * 1024)}`;
      const batch = [
        { jsonrpc: '2.0', id, method: 'ping' },
        { jsonrpc: '2.0', id, method: 'ping' },
      ];
      const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify(batch) });
      const body = (await res.json()) as { id: unknown; error: { message: string } };
      assert.equal(res.status, 400);
      assert.ok(body.id === id, 'the response still echoes the id whole (JSON-RPC)');
      const message = body.error.message;
      assert.ok(message.length < 1024, `the message quotes ${message.length} characters: ${message.slice(0, 80)}…`);
      assert.match(message, /^Invalid Request: id "dup-x+…" is already in use/);
      await until('the refusal to be logged', () => lines.some((l) => l.includes('"msg":"request refused"') && l.includes('already in use')));
      const line = lines.find((l) => l.includes('"msg":"request refused"') && l.includes('already in use'))!;
      assert.ok(line.length < 4096, `the log line is ${line.length} characters long`);
    } finally {
      await gw.close();
    }
  });
});
