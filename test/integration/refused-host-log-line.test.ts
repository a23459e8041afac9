// A request whose Host or Origin the gateway does not allow (DNS-rebinding protection) is refused 403
// before authentication, and the refusal's message, also the edge's "request refused" info line, quoted
// the header whole: anyone who can reach the port made a log line as large as Node's header limit
// (16 KiB) per request. Now the header is cut as other client-chosen text in a log line is. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLoggedFixtureGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe('a refused Host or Origin in the log', () => {
  it('a 12 KiB Origin: 403, its message and log line cut', async () => {
    const lines: string[] = [];
    const gw = await startLoggedFixtureGateway(lines);
    try {
      const origin = `https://${'o'.repeat(12 * 1024)}.example`;
      const res = await fetch(gw.url(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin }, body: BODY });
      const text = await res.text();
      assert.equal(res.status, 403);
      assert.ok(text.length < 2048, `the answer is ${text.length} characters long`);
      assert.match(text, /Origin \\?"https:\/\/o+…\\?" is not allowed/);
      await until('the refusal to be logged', () => lines.some((l) => l.includes('"msg":"request refused"') && l.includes('is not allowed')));
      const line = lines.find((l) => l.includes('"msg":"request refused"') && l.includes('is not allowed'))!;
      assert.ok(line.length < 4096, `the log line is ${line.length} characters long`);
    } finally {
      await gw.close();
    }
  });
});
