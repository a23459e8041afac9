// The gateway declares no `tasks` capability (it routes no tasks/*), so a task-augmented tools/call is, as
// 2025-11-25 requires of a receiver without it, processed normally: its `task` is not passed on. Passed on,
// server-everything (SDK 1.x) answered a plain tool's call -32602 ("Invalid task creation result"), and a tool
// that supports tasks a CreateTaskResult whose task the client could never poll (tasks/get is not routed).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, textOf } from '../helpers/sdk.js';

describe('a task-augmented tools/call through a gateway that declares no tasks', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [everythingUpstream('ev', 'shared')], endpoints: [{ path: '/mcp', upstreams: ['ev'] }] });
  });
  after(() => gw.close());

  it('a 2025-11-25 client: no tasks capability is offered, and the call is answered as a plain one', async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.equal(client.getServerCapabilities()?.tasks, undefined);
      const params = { name: 'echo', arguments: { message: 'hi' }, task: { ttl: 60_000 } };
      const r = await client.request({ method: 'tools/call', params }, CallToolResultSchema);
      assert.equal(textOf(r), 'Echo: hi', JSON.stringify(r));
      assert.equal((r as Record<string, unknown>).task, undefined);
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 client: the same', async () => {
    const a = await modernPost(gw.url(), 'tools/call', { name: 'echo', arguments: { message: 'hi' }, task: { ttl: 60_000 } });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.result?.content?.[0]?.text, 'Echo: hi', JSON.stringify(a.body));
  });
});
