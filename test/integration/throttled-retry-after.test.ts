// A request answered with an HTTP status of its own because its upstream throttled the gateway (a per-session
// instance whose start the upstream refused 429 + Retry-After: SWB_UPSTREAM_THROTTLED, data.retryAfterSeconds)
// says when to retry in a Retry-After header too, the same seconds, as the rate limiter's 429 does. Before, a
// 2026-07-28 request so refused (503) said `Retry-After: 5` whatever the upstream asked for. (A 2025 session's
// initialize so refused is a JSON-RPC error in a 200, as any call's: no status, no header.)
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

const RETRY_AFTER_S = 37;

describe('a request refused because its upstream throttled the gateway', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let close: () => void;
  before(async () => {
    // A 2025 server refusing every initialize as overloaded.
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(RETRY_AFTER_S) }).end('slow down'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    close = () => (server.closeAllConnections(), server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    gw = await startGateway({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', sharing: 'per-session', healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] });
  });
  after(async () => {
    await gw?.close();
    close?.();
  });

  it('2026-07-28: the HTTP refusal carries Retry-After with data.retryAfterSeconds', async () => {
    const res = await fetch(gw.url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const body = (await res.json()) as any;
    assert.equal(body.error?.data?.code, 'SWB_UPSTREAM_THROTTLED', JSON.stringify(body));
    assert.equal(res.status, 503, JSON.stringify(body));
    const seconds = body.error.data.retryAfterSeconds;
    assert.ok(seconds > 5 && seconds <= RETRY_AFTER_S, JSON.stringify(body));
    assert.equal(res.headers.get('retry-after'), String(seconds));
  });
});
