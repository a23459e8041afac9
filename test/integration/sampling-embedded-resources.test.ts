// Resources embedded in an upstream's sampling request, past a tenant's resource rules (found by a review on
// 2026-12-07). A tool's or a prompt's answer has its embedded and linked resources judged (embedded-resources.ts),
// but a sampling/createMessage an upstream put to the client was relayed as written: its messages (a
// `{type: "resource"}` or `{type: "resource_link"}` item, or one inside a `tool_result`) showed the client, and
// its model, file:///secrets/key.txt that a read of it answers "not found". Now such items are left out as a
// tool result leaves them out, in both eras. Real gateway on a real port, the params-recording stdio fixture
// (its `ask` tool puts the request to the client), the official SDK client and raw 2026-07-28 POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const SHOWN = 'file:///docs/a.txt';
const DENIED = 'file:///secrets/key.txt';
const embedded = (uri: string) => ({ type: 'resource', resource: { uri, mimeType: 'text/plain', text: `text of ${uri}` } });
const linked = (uri: string) => ({ type: 'resource_link', uri, name: uri });
const sampling = {
  method: 'sampling/createMessage',
  params: {
    maxTokens: 5,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'read these' }, embedded(SHOWN), embedded(DENIED), linked(DENIED), linked(SHOWN)] },
      { role: 'user', content: embedded(DENIED) },
      { role: 'assistant', content: { type: 'tool_use', id: 't1', name: 'read', input: {} } },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [embedded(DENIED), { type: 'text', text: 'done' }] }] },
    ],
  },
};
/** What the client was shown: per message its role and items (a tool_result's items after it). */
const seen = (params: any): string[] =>
  params.messages.map((m: any) =>
    [m.role, ...[m.content].flat().flatMap((c: any) => (c.type === 'tool_result' ? ['tool_result', ...c.content] : [c])).map((c: any) => (typeof c === 'string' ? c : `${c.type}:${c.resource?.uri ?? c.uri ?? c.text ?? c.name ?? ''}`))].join(' '),
  );
/** As the protocol's schema allows it (the SDK client refuses any other): resources only inside a tool's result. */
const valid = {
  method: 'sampling/createMessage',
  params: {
    maxTokens: 5,
    messages: [
      { role: 'user', content: { type: 'text', text: 'read these' } },
      { role: 'assistant', content: { type: 'tool_use', id: 't1', name: 'read', input: {} } },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [embedded(SHOWN), embedded(DENIED), linked(DENIED), { type: 'text', text: 'done' }] }] },
    ],
  },
};
const VALID_SEEN = ['user text:read these', 'assistant tool_use:read', `user tool_result resource:${SHOWN} text:done`];
const EXPECTED = [`user text:read these resource:${SHOWN} resource_link:${SHOWN}`, 'assistant tool_use:read', 'user tool_result text:done'];

describe("an upstream's sampling request embedding resources the tenant is denied", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;
  const asked: any[] = [];

  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['file:///secrets/*'] } }],
      upstreams: [{ name: 'p', transport: 'stdio', command: process.execPath, args: ['test/fixtures/params-recording-server.mjs'], sandbox: 'none', sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['p'] }],
    });
    client = await connectClient(gw, 'streamable-http');
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push(req.params);
      return { model: 'm', role: 'assistant', content: { type: 'text', text: 'ok' } };
    });
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('a 2025 client is asked without the denied file a tool result embeds or links', async () => {
    asked.length = 0;
    await client.callTool({ name: 'ask', arguments: valid });
    assert.equal(asked.length, 1);
    assert.deepEqual(seen(asked[0]), VALID_SEEN);
    assert.ok(!JSON.stringify(asked[0]).includes('secret'), JSON.stringify(asked[0]));
  });

  it('a sampling request embedding only what the tenant may read goes as it is', async () => {
    asked.length = 0;
    const allowed = { method: 'sampling/createMessage', params: { maxTokens: 5, messages: [valid.params.messages[1], { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [embedded(SHOWN)] }] }] } };
    await client.callTool({ name: 'ask', arguments: allowed });
    assert.deepEqual(asked[0].messages, allowed.params.messages);
  });

  // Last: its round holds the call on the shared instance (no retry is sent).
  it("a 2026-07-28 client's input round is asked without it, wherever a message holds it", async () => {
    const round = inputRound(await modernPost(gw.url(), 'tools/call', { name: 'ask', arguments: sampling }));
    assert.equal(round.method, 'sampling/createMessage');
    assert.deepEqual(seen(round.params), EXPECTED);
    assert.ok(!JSON.stringify(round.params).includes('secret'), JSON.stringify(round.params));
  });
});
