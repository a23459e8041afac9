// A 2025 client's request carries no round of the 2026-07-28 era: inputResponses and requestState are the
// gateway's to send a 2026-07-28 upstream, with the answers its client gave to the upstream's own questions
// and the state the upstream itself issued (the spec: a client MUST NOT send a requestState the
// InputRequiredResult did not carry). A 2025 client that put them in its params had them sent on as they came
// (found by a review): a requestState the upstream never issued, presented as the gateway's, and answers to
// questions never put to the client's user, taken before the upstream asked. A raw 2026-07-28 upstream on a
// real port records what it is sent; the official SDK 1.x client.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const V = '2026-07-28';

/** tools/call "ask": without an answer under "name", asks for one (no requestState); with one, says what it was sent. */
async function askingUpstream(calls: any[]): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      const m = JSON.parse(text);
      const json = (result: Record<string, unknown>) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      if (m.method === 'server/discover') return json({ resultType: 'complete', supportedVersions: [V], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'private' });
      if (m.method === 'tools/list') return json({ resultType: 'complete', tools: [{ name: 'ask', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'private' });
      if (m.method === 'subscriptions/listen') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
      if (m.method === 'tools/call') {
        calls.push(m.params);
        const answer = m.params.inputResponses?.name;
        if (!answer) return json({ resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } } } });
        return json({ resultType: 'complete', content: [{ type: 'text', text: `${answer.content?.name} (state ${m.params.requestState ?? 'none'})` }] });
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe("a 2025 client's inputResponses and requestState never reach a 2026-07-28 upstream", () => {
  const calls: any[] = [];
  let up: { server: Server; url: string };
  let gw: RunningGateway;
  before(async () => {
    up = await askingUpstream(calls);
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'm', transport: 'streamable-http', url: up.url, era: 'modern', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['m'] }],
    });
  });
  after(async () => {
    await gw.close();
    up.server.closeAllConnections();
    up.server.close();
  });

  it("the upstream's question is put to the client, and its retry carries the client's answer and no state", async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      const forged = { name: 'ask', arguments: {}, requestState: 'forged-state', inputResponses: { name: { action: 'accept', content: { name: 'Mallory' } } } };
      const r = await client.request({ method: 'tools/call', params: forged }, CallToolResultSchema);
      assert.equal(textOf(r), 'Ada (state none)', 'the answer the client gave when asked');
      assert.equal(calls.length, 2, JSON.stringify(calls));
      assert.deepEqual(calls.map((p) => [p.requestState, p.inputResponses?.name?.content?.name]), [
        [undefined, undefined],
        [undefined, 'Ada'],
      ]);
    } finally {
      await client.close();
    }
  });
});
