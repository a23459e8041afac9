// A 2026-07-28 upstream's result whose resultType the gateway does not know (a tasks-extension handle,
// "task", which the gateway never asked for: it relays no extension capabilities). The era says a client
// MUST consider such a result invalid. The gateway took resultType off and put "complete" back, so a
// 2026-07-28 client got a "complete" CallToolResult with no content (what the schema forbids) and a 2025
// client an empty tool result, the upstream's work silently lost (found by checking the gateway's wire
// output against the official schema).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, mcpRefusal } from '../helpers/sdk.js';

const UPSTREAM = { name: 'rec', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs', '--modern'], sandbox: 'none' as const, sharing: 'shared' as const, era: 'modern' as const };

describe('a 2026-07-28 upstream answering with a resultType the gateway does not know', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
  });
  after(() => gw.close());

  it('fails a 2026-07-28 client\'s call as the upstream\'s protocol failure, never as "complete"', async () => {
    for (const resultType of ['task', 'Complete']) {
      const r = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'task', arguments: { resultType } }, { caps: {} });
      assert.equal(r.body.result, undefined, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32000, JSON.stringify(r.body));
      assert.equal(r.body.error.data?.code, 'SWB_UPSTREAM_PROTOCOL');
      assert.match(r.body.error.message, new RegExp(`resultType "${resultType}"`));
    }
  });

  it("fails a 2025 client's call too, rather than handing it an empty result", async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      const err = await mcpRefusal(() => client.callTool({ name: 'task', arguments: {} }));
      assert.match(err.message, /resultType "task"/);
      // An explicit "complete" is still a result.
      const plain = await client.callTool({ name: 'echo', arguments: {} });
      assert.equal((plain.content as Array<{ text: string }>)[0]!.text, 'echo');
    } finally {
      await client.close();
    }
  });
});
