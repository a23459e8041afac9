// server/discover, which the method table gives a metrics label of its own, was answered by the modern
// service before the request pipeline and counted nowhere: a fleet of 2026-07-28 clients discovering the
// gateway left switchboard_requests_total as if no request had come. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

describe('metrics: server/discover', () => {
  it('is counted (protocol_era="modern") and timed', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    try {
      for (let i = 0; i < 2; i++) assert.equal((await modernPost(gw.url(), 'server/discover', {})).status, 200);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      const labels = 'method="server/discover",endpoint="/mcp",upstream="none",outcome="ok",protocol_era="modern"';
      assert.ok(text.includes(`switchboard_requests_total{${labels}} 2\n`), text);
      assert.ok(text.includes(`switchboard_request_duration_seconds_count{${labels}} 2\n`), text);
    } finally {
      await gw.close();
    }
  });
});
