// A request not received within its deadline (headers within server.headersTimeoutMs, the whole request
// within server.bodyTimeoutMs) is answered 408 and its connection closed by node, which the README counts
// among the connections "refused or cut" in switchboard_connections_refused_total; it was counted under
// no reason at all, so a slow-headers or slow-body flood left every metric still. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { until } from '../helpers/wait.js';

describe('metrics: requests cut by their deadline', () => {
  it('slow headers and a slow body are counted as request_timeout', async () => {
    const gw = await startGateway({
      // A body idle longer than its deadline is cut by the deadline, not the idle timer.
      server: { headersTimeoutMs: 200, bodyTimeoutMs: 400, bodyIdleTimeoutMs: 60_000 },
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    try {
      const { hostname, port } = new URL(gw.base);
      const headers = await openRawSocket(hostname, Number(port));
      headers.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const body = await openRawSocket(hostname, Number(port));
      body.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc"');
      await until('both connections were cut', () => headers.closed() && body.closed());
      assert.match(headers.received(), /^HTTP\/1\.1 408/);
      assert.match(body.received(), /^HTTP\/1\.1 408/);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.match(text, /^switchboard_connections_refused_total\{reason="request_timeout"\} 2$/m, text);
    } finally {
      await gw.close();
    }
  });
});
