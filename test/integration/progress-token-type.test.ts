// A client's `_meta.progressToken` that is neither a string nor an integer (the spec: "Progress tokens MUST
// be a string or integer value"; the schema: ["string", "integer"]) is invalid params, in both eras: refused
// -32602 naming the field, before anything is forwarded. Before, such a token was taken as a request for
// progress and echoed back as it came (an object, `true`, `1.5`, `null`) on every notifications/progress,
// which a conforming client cannot match to its request. Real gateway, conformance fixture (stdio), raw HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { initializeBody, mcpRequest, type Json } from '../helpers/tokens.js';

const TOOL = 'test_tool_with_progress';
const BAD: unknown[] = [{ t: 1 }, true, 1.5, null, ['a'], -0.25];
const GOOD: unknown[] = ['abc', 7, -3, 0];

/** Every JSON-RPC message in a JSON or SSE body. */
function messagesOf(text: string): Json[] {
  if (text.startsWith('{')) return [JSON.parse(text) as Json];
  return text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Json);
}

describe('a progressToken that is neither a string nor an integer', () => {
  let gw: RunningGateway;
  let sid: string;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    const init = await mcpRequest(gw, initializeBody());
    sid = init.headers.get('mcp-session-id')!;
    assert.equal((await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
  });
  after(() => gw.close());

  it('is refused -32602 in a 2025 session; a string or integer token gets its progress', async () => {
    for (const [i, progressToken] of BAD.entries()) {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: TOOL, arguments: {}, _meta: { progressToken } } }, { sid });
      const messages = messagesOf(r.text);
      assert.deepEqual(messages.filter((m) => m.method === 'notifications/progress'), [], `${JSON.stringify(progressToken)}: ${r.text}`);
      assert.equal(r.json?.id, i, r.text);
      assert.equal(r.json?.error?.code, -32602, `${JSON.stringify(progressToken)}: ${r.text}`);
      assert.match(r.json?.error?.message, /progressToken/);
    }
    for (const progressToken of GOOD) {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 'ok', method: 'tools/call', params: { name: TOOL, arguments: {}, _meta: { progressToken } } }, { sid });
      const progress = messagesOf(r.text).filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(progress.map((m) => m.params.progressToken), [progressToken, progressToken, progressToken], r.text);
      assert.equal(r.json?.error, undefined, r.text);
    }
  });

  it('is refused 400 -32602 in a 2026-07-28 request; a string or integer token gets its progress', async () => {
    for (const progressToken of BAD) {
      const r = await modernPost(gw.url(), 'tools/call', { name: TOOL, arguments: {} }, { meta: { progressToken } });
      assert.deepEqual(r.messages.filter((m) => m.method === 'notifications/progress'), [], `${JSON.stringify(progressToken)}: ${JSON.stringify(r.messages)}`);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, -32602, `${JSON.stringify(progressToken)}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error?.message, /progressToken/);
    }
    for (const progressToken of GOOD) {
      const r = await modernPost(gw.url(), 'tools/call', { name: TOOL, arguments: {} }, { meta: { progressToken } });
      const progress = r.messages.filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(progress.map((m) => m.params.progressToken), [progressToken, progressToken, progressToken], JSON.stringify(r.messages));
      assert.equal(r.body.error, undefined, JSON.stringify(r.body));
    }
  });
});
