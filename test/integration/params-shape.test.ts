// Requests whose params break the shape MCP's schema gives them, over real HTTP in both eras, to a stdio
// fixture that records every request it is sent. Found by fuzzing the edge: each of these was forwarded
// as it came (a shared upstream that trusts the schema throws on `"arguments": "x"`, a fragile one dies
// with every session's calls in flight) and answered with whatever the upstream made of it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest, type Json } from '../helpers/tokens.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';

const UPSTREAM = { name: 'rec', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

const BAD: Array<[string, Json]> = [
  ['tools/call', { name: 'echo', arguments: 'x' }],
  ['tools/call', { name: 'echo', arguments: [] }],
  ['tools/call', { name: 'echo', arguments: null }],
  ['tools/call', { name: 'echo', arguments: {}, _meta: 'x' }],
  ['tools/call', { name: 'echo', arguments: {}, _meta: null }],
  ['tools/call', { name: 'echo', arguments: {}, task: 5 }],
  ['resources/read', { uri: 'test://a', _meta: [] }],
  ['prompts/get', { name: 'p', arguments: [1] }],
  ['prompts/get', { name: 'p', arguments: { a: 1 } }],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: 'x' }],
  ['completion/complete', { ref: { type: 'ref/resource', uri: 'test://a' } }],
  ['logging/setLevel', { level: 5 }],
  ['logging/setLevel', {}],
  ['resources/unsubscribe', { uri: {} }],
];

describe('params that break the schema are refused -32602 and never reach the upstream', () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    gw = await startGateway({ upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
    const init = await mcpRequest(gw, initializeBody());
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(() => gw.close());

  const seen = async (): Promise<Json[]> => {
    const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 'seen', method: 'tools/call', params: { name: 'seen', arguments: {} } }, { sid });
    return JSON.parse(r.json?.result?.content?.[0]?.text) as Json[];
  };

  it('in a 2025 session', async () => {
    for (const [i, [method, params]] of BAD.entries()) {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: i, method, params }, { sid });
      assert.equal(r.json?.id, i, r.text);
      assert.equal(r.json?.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${r.text}`);
      assert.match(r.json?.error?.message, /^Invalid params: /);
    }
    assert.deepEqual(await seen(), []);
    // Well-formed ones still pass.
    const ok = await mcpRequest(gw, { jsonrpc: '2.0', id: 'ok', method: 'prompts/get', params: { name: 'p', arguments: { a: 'b' }, _meta: {} } }, { sid });
    assert.deepEqual(ok.json?.result, { messages: [] }, ok.text);
    assert.deepEqual((await seen()).map((m) => m.method), ['prompts/get']);
  });

  it('in a 2026-07-28 request', async () => {
    const before = (await seen()).length;
    for (const [i, [method, params]] of BAD.entries()) {
      // That era has no logging/setLevel or resources/unsubscribe, and a _meta that is not an object is its own -32602 (its checks of _meta come first).
      if (method === 'logging/setLevel' || method === 'resources/unsubscribe' || '_meta' in params) continue;
      const name = (params.name ?? params.uri) as string | undefined;
      const headers: Record<string, string> = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name && method !== 'completion/complete' ? { 'mcp-name': name } : {}) };
      const { _meta: _dropped, ...rest } = params;
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: i, method, params: { ...rest, _meta: META } }, { headers });
      assert.equal(r.json?.id, i, r.text);
      assert.equal(r.json?.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${r.text}`);
    }
    assert.equal((await seen()).length, before);
  });
});

/** Calls the fixture's `ask` tool for `method` in session `sid`, answers what it asks with `answer`, and returns what the fixture was relayed. */
async function askThrough(gw: RunningGateway, sid: string, method: string, answer: Json): Promise<{ relayed: Json; answerStatus: number }> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'ask', method: 'tools/call', params: { name: 'ask', arguments: { method } } }), signal: AbortSignal.timeout(20_000) });
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  let text = '';
  let answerStatus = 0;
  for (;;) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the stream ended before the call's answer: ${text}`);
    text += Buffer.from(value).toString();
    const messages = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Json);
    const asked = messages.find((m) => m.method === method);
    if (asked && answerStatus === 0) {
      const r = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: asked.id, ...answer }) });
      answerStatus = r.status;
    }
    const done2 = messages.find((m) => m.id === 'ask');
    if (done2) return { relayed: JSON.parse(done2.result.content[0].text) as Json, answerStatus };
  }
}

describe("a client's answer that breaks the schema of the request it answers is not relayed to the upstream", () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    // per-session: the gateway declares roots to a dedicated process only.
    gw = await startGateway({ upstreams: [{ ...UPSTREAM, sharing: 'per-session', pool: { warm: 0, max: 2 } }], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
    const init = await mcpRequest(gw, { ...initializeBody(), params: { ...initializeBody().params, capabilities: { elicitation: {}, sampling: {}, roots: {} } } });
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(() => gw.close());

  const BAD_ANSWERS: Array<[string, Json]> = [
    ['elicitation/create', { action: 5 }],
    ['elicitation/create', {}],
    ['elicitation/create', { action: 'accept', content: 'x' }],
    ['elicitation/create', { action: 'accept', content: { x: { deep: 1 } } }],
    ['sampling/createMessage', { role: 'user', content: { type: 'text', text: 'a' } }],
    ['sampling/createMessage', { role: 'robot', model: 'm', content: { type: 'text', text: 'a' } }],
    ['sampling/createMessage', { role: 'assistant', model: 'm', content: 'a' }],
    ['roots/list', { roots: 'x' }],
    ['roots/list', { roots: [{ name: 'no uri' }] }],
  ];
  for (const [method, result] of BAD_ANSWERS) {
    it(`${method} answered ${JSON.stringify(result)}: the upstream is answered an error`, async () => {
      const { relayed, answerStatus } = await askThrough(gw, sid, method, { result });
      assert.equal(answerStatus, 202);
      assert.equal(relayed.result, undefined, JSON.stringify(relayed));
      assert.equal(relayed.error?.code, -32603, JSON.stringify(relayed));
      assert.match(relayed.error?.message, new RegExp(`answer to "${method}" is invalid`));
    });
  }

  it('well-formed answers are relayed as they came', async () => {
    for (const [method, result] of [
      ['elicitation/create', { action: 'accept', content: { x: 'y', n: 1, b: true, list: ['a'] } }],
      ['elicitation/create', { action: 'decline' }],
      ['sampling/createMessage', { role: 'assistant', model: 'm', content: { type: 'text', text: 'a' }, stopReason: 'endTurn' }],
      ['roots/list', { roots: [{ uri: 'file:///tmp', name: 't' }] }],
    ] as Array<[string, Json]>) {
      const { relayed } = await askThrough(gw, sid, method, { result });
      assert.deepEqual(relayed.result, result, JSON.stringify(relayed));
    }
  });

  // Before 2026-12-07 the upstream was answered an error in its place, and the client got the tool's result of that.
  it('a 2026-07-28 retry whose input response breaks the schema is refused -32602, as through a 2026-07-28 upstream', async () => {
    const shared = await startGateway({ upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
    try {
      const params = { name: 'ask', arguments: { method: 'elicitation/create' } };
      const round = inputRound(await modernPost(shared.url(), 'tools/call', params));
      const retry = await modernPost(shared.url(), 'tools/call', { ...params, inputResponses: { [round.key]: { action: 5 } }, requestState: round.state });
      assert.equal(retry.body.result, undefined, JSON.stringify(retry.body));
      assert.equal(retry.body.error?.code, -32602, JSON.stringify(retry.body));
      assert.match(retry.body.error?.message, /answer to "elicitation\/create" is invalid/);
    } finally {
      await shared.close();
    }
  });
});

describe('client capabilities that break the schema are refused -32602', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ upstreams: [UPSTREAM], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
  });
  after(() => gw.close());

  const BAD_CAPS: Json[] = [{ sampling: 'x' }, { elicitation: 5 }, { roots: [] }, { roots: null }, { experimental: true }];

  it("by initialize, which opens no session", async () => {
    for (const capabilities of [...BAD_CAPS, []]) {
      const r = await mcpRequest(gw, { ...initializeBody(), params: { ...initializeBody().params, capabilities } });
      assert.equal(r.json?.error?.code, -32602, `${JSON.stringify(capabilities)}: ${r.text}`);
      assert.match(r.json?.error?.message, /^Invalid params: initialize's capabilities: /);
      assert.equal(r.headers.get('mcp-session-id'), null);
    }
  });

  it('in a 2026-07-28 request, which reaches no upstream', async () => {
    for (const caps of [...BAD_CAPS, { extensions: 'x' }]) {
      const r = await modernPost(gw.url(), 'tools/call', { name: 'echo', arguments: {} }, { caps });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32602, `${JSON.stringify(caps)}: ${JSON.stringify(r.body)}`);
    }
    const seen = await modernPost(gw.url(), 'tools/call', { name: 'seen', arguments: {} }, { caps: {} });
    assert.deepEqual(JSON.parse(seen.body.result.content[0].text), []);
  });
});

describe("a client's input response that breaks the schema is not sent on to a 2026-07-28 upstream", () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ upstreams: [{ ...UPSTREAM, args: [...UPSTREAM.args, '--modern'], era: 'modern' }], endpoints: [{ path: '/mcp', upstreams: ['rec'] }] });
  });
  after(() => gw.close());

  const ask = async (method: string, result: Json) => {
    const params = { name: 'ask', arguments: { method } };
    const round = inputRound(await modernPost(gw.url(), 'tools/call', params));
    return modernPost(gw.url(), 'tools/call', { ...params, inputResponses: { [round.key]: result }, requestState: round.state });
  };

  it('the call fails -32602 naming the bad answer; well-formed answers reach the upstream', async () => {
    for (const [method, result] of [
      ['elicitation/create', { action: 5 }],
      ['sampling/createMessage', { role: 'assistant', content: { type: 'text', text: 'a' } }],
    ] as Array<[string, Json]>) {
      const retry = await ask(method, result);
      assert.equal(retry.body.result, undefined, JSON.stringify(retry.body));
      assert.equal(retry.body.error?.code, -32602, JSON.stringify(retry.body));
      assert.match(retry.body.error?.message, new RegExp(`answer to "${method}" is invalid`));
    }
    const ok = await ask('elicitation/create', { action: 'accept', content: { x: 'y' } });
    assert.deepEqual(JSON.parse(ok.body.result.content[0].text), { k: { action: 'accept', content: { x: 'y' } } });
  });
});
