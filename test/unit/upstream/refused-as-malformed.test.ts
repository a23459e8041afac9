// A remote upstream answering one POST 400 about that request's body — the SDK's "Parse error" (-32700), "Invalid
// Request" (-32600), "Invalid params" (-32602), the legacy HTTP+SSE server's "Invalid message: …" — is alive and
// reading: it refused that one request. Before, every such 400 failed the call as "could not be reached"
// (SWB_UPSTREAM_UNAVAILABLE), counted by the circuit: one client's odd request paused the upstream for everyone. Now it
// is SWB_UPSTREAM_REQUEST_REFUSED, quoting the upstream, not counted. A 400 every request would get (a content type,
// a protocol version, "Server not initialized": all the same on each request) still signals a broken upstream: counted.
// Real loopback HTTP, the real pool and transports; a circuit that opens at the first failure.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { legacyHttpPool, startLegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';
import { legacySsePool, startLegacySseUpstream } from '../../helpers/legacy-sse-upstream.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';

type Failure = { code?: string; message: string; details?: Record<string, unknown> };
const OK = { content: [{ type: 'text', text: 'ok' }] };
const rpcError = (code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });

/** A Streamable HTTP upstream refusing its first tools/call 400 with `body`, then answering. */
async function streamableRefusing(body: string, type: string) {
  let calls = 0;
  const up = await startLegacyHttpUpstream((_req, res, m) => {
    if (calls++ === 0) return void res.writeHead(400, { 'content-type': type }).end(body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: OK }));
  });
  const gw = await legacyHttpPool(up.url, { circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 60_000 }, requestTimeoutMs: 5000 });
  const call = () => gw.instance.request('tools/call', { name: 'echo', arguments: {} }, { caller: testCaller });
  return { gw, call, close: async () => (await gw.close(), up.close()) };
}

const refusedRequest = (quote: RegExp) => (err: Failure) => {
  assert.equal(err.code, 'SWB_UPSTREAM_REQUEST_REFUSED', err.message);
  assert.equal(err.details?.upstream, 'u');
  assert.equal(err.details?.httpStatus, 400);
  assert.match(err.message, /upstream "u" refused the request \(HTTP 400\)/);
  assert.match(err.message, quote);
  return true;
};

describe('a remote upstream refusing one request 400 as malformed', () => {
  for (const [what, body, type, quote] of [
    ['Parse error (-32700)', rpcError(-32700, 'Parse error: Invalid JSON'), 'application/json', /Parse error: Invalid JSON/],
    ['Invalid Request (-32600)', rpcError(-32600, 'Invalid Request: Batch must not exceed 100 messages'), 'application/json', /Invalid Request/],
    ['Invalid params (-32602), as text', 'Invalid params: name must be a string', 'text/plain', /Invalid params/],
  ] as const) {
    it(`${what}: SWB_UPSTREAM_REQUEST_REFUSED quoting it, the circuit stays closed, the next call goes`, async () => {
      const r = await streamableRefusing(body, type);
      try {
        await assert.rejects(r.call(), refusedRequest(quote));
        assert.equal(r.gw.instance.circuit, 'closed');
        assert.deepEqual(await r.call(), OK);
      } finally {
        await r.close();
      }
    });
  }

  it('a 400 every request would get (a header, the version, not initialized) still counts: the circuit opens', async () => {
    for (const body of [rpcError(-32000, 'Bad Request: Unsupported protocol version: 2025-06-18'), rpcError(-32000, 'Bad Request: Server not initialized'), 'Error: Unsupported content-type: text/plain', 'Bad Request']) {
      const r = await streamableRefusing(body, body.startsWith('{') ? 'application/json' : 'text/plain');
      try {
        await assert.rejects(r.call(), (err: Failure) => (assert.equal(err.code, 'SWB_UPSTREAM_UNAVAILABLE', err.message), true));
        assert.equal(r.gw.instance.circuit, 'open', body);
      } finally {
        await r.close();
      }
    }
  });

  it("legacy HTTP+SSE: the SDK server's 400 \"Invalid message: …\" is the request's, not counted", async () => {
    let calls = 0;
    const up = await startLegacySseUpstream((res, m, _session, answer) => {
      if (m.method === 'tools/call' && calls++ === 0) return void res.writeHead(400).end(`Invalid message: ${JSON.stringify(m)}`);
      answer(OK);
    });
    const gw = await legacySsePool(up.url, { requestTimeoutMs: 5000, circuitBreaker: { failureThreshold: 1 } });
    try {
      const inst = gw.instance;
      const call = () => inst.request('tools/call', { name: 'echo', arguments: {} }, { caller: testCaller });
      await assert.rejects(call(), refusedRequest(/Invalid message: \{/));
      assert.equal(inst.circuit, 'closed');
      assert.deepEqual(await call(), OK);
    } finally {
      await gw.close();
      up.close();
    }
  });
});
