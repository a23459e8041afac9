// The requests the session's lifecycle answers itself (initialize, ping, and the refusals of a request
// sent before initialize or under an id already in flight) were counted nowhere: the method table gives
// initialize and ping a metrics label of their own, but the lifecycle answered before the observe stage,
// so a session start refused because the upstream's pool was exhausted (SWB_POOL_EXHAUSTED, after waiting
// out pool.acquireTimeoutMs) left switchboard_requests_total and the duration histogram unmoved. Found by
// a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics: requests the session lifecycle answers', () => {
  it('initialize (answered or refused: pool exhausted, bad params), ping and a request before initialize are counted and timed', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      // One per-session instance at most, waited for briefly: a second session's initialize is refused.
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 1, acquireTimeoutMs: 200 } }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    try {
      const client = await connectClient(gw, 'streamable-http');
      await client.ping();
      const exhausted = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
      assert.match(await exhausted.text(), /SWB_POOL_EXHAUSTED/);
      const badParams = await fetch(gw.url(), { method: 'POST', headers: HEADERS, body: JSON.stringify({ ...INIT, params: { capabilities: {} } }) });
      assert.match(await badParams.text(), /"error"/);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      const labels = (method: string, outcome: string) => `method="${method}",endpoint="/mcp",upstream="none",outcome="${outcome}",protocol_era="legacy"`;
      assert.equal(sample(text, 'switchboard_requests_total', labels('initialize', 'ok')), 1, text);
      assert.equal(sample(text, 'switchboard_requests_total', labels('initialize', 'error')), 2, text);
      assert.equal(sample(text, 'switchboard_request_duration_seconds_count', labels('initialize', 'error')), 2, text);
      assert.equal(sample(text, 'switchboard_requests_total', labels('ping', 'ok')), 1, text);
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('a request refused by the lifecycle (before initialize, on the legacy transport) is counted as an error', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    const stream = new AbortController();
    try {
      const sse = await fetch(gw.url('/sse'), { headers: { accept: 'text/event-stream' }, signal: stream.signal });
      const reader = sse.body!.getReader();
      let head = '';
      while (!/data: (\S+)/.test(head)) {
        const { value, done } = await reader.read();
        assert.ok(!done, 'the stream ended before its endpoint event');
        head += new TextDecoder().decode(value);
      }
      const endpoint = new URL(/data: (\S+)/.exec(head)![1]!, gw.base);
      const early = await fetch(endpoint, { method: 'POST', headers: HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      assert.equal(early.status, 202);
      let text = '';
      // The refusal goes out on the stream; the count follows it at once. Bounded: the stream's next event.
      while (!/before initialize/.test(text)) {
        const { value, done } = await reader.read();
        assert.ok(!done, 'the stream ended before the refusal');
        text += new TextDecoder().decode(value);
      }
      const metrics = await (await fetch(gw.app.metricsUrl!)).text();
      assert.equal(sample(metrics, 'switchboard_requests_total', 'method="tools/list",endpoint="/mcp",upstream="none",outcome="error",protocol_era="legacy"'), 1, metrics);
    } finally {
      stream.abort();
      await gw.close();
    }
  });
});
