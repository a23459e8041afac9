// A tenant's requestsPerSecond takes a token per JSON-RPC request a client sends, and none for what it
// POSTs that is not a request: its answer to a question the gateway put to it (an upstream's
// elicitation/create here), or a notification. Before, the front door took a token for every POST
// before reading its body: on a busy tenant the answer to an elicitation got 429 and was dropped, and
// the call that asked waited for it until it failed. A real gateway on a real port in front of the
// conformance stdio server; auth off, so the caller is tenant "anonymous", whose limits these are. The
// bucket refills at one token per 100 s: nothing refills while the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';

/** The JSON-RPC messages of an SSE stream, read as they come until `stop` says enough (or it ends). */
async function readEvents(res: Response, stop: (m: Json) => boolean): Promise<Json[]> {
  const seen: Json[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return seen;
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const data = buffered.slice(0, end).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
      buffered = buffered.slice(end + 2);
      if (!data.startsWith('{')) continue;
      seen.push(JSON.parse(data) as Json);
      if (stop(seen.at(-1)!)) {
        void reader.cancel().catch(() => {});
        return seen;
      }
    }
  }
}

describe('requestsPerSecond and what a client POSTs that is not a request', { timeout: 60_000 }, () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.01, burst: 4 } }],
    });
  });
  after(async () => {
    await gw?.close();
  });

  it("the answer to an upstream's elicitation and the client's notifications take no token; its requests do", async () => {
    const init = await post(gw, initializeBody('2025-06-18', 1, { elicitation: {} }));
    assert.equal(init.status, 200, await init.text());
    const sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    const call = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_elicitation', arguments: { message: 'go on?' } } }, { sid, signal: AbortSignal.timeout(30_000) });
    assert.equal(call.status, 200);
    const [asked] = await readEvents(call.clone(), (m) => m.method === 'elicitation/create');
    assert.equal(asked?.method, 'elicitation/create', JSON.stringify(asked));
    // Three requests so far (initialize, the call, this ping): one token of the four is left.
    assert.equal((await post(gw, { jsonrpc: '2.0', id: 3, method: 'ping' }, { sid })).status, 200);

    // The answer is accepted and the call completes with it.
    const answered = await post(gw, { jsonrpc: '2.0', id: asked!.id, result: { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } }, { sid });
    assert.equal(answered.status, 202, await answered.clone().text());
    const result = (await readEvents(call, (m) => m.id === 2)).find((m) => m.id === 2);
    assert.match(JSON.stringify(result?.result), /action=accept.*ada@example\.com/, JSON.stringify(result));
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, { sid })).status, 202);

    // The last token is still there for a request; the next request is over the rate: 429, with its id.
    const last = await post(gw, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid });
    assert.equal(last.status, 200, await last.clone().text());
    const refused = await post(gw, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { sid });
    assert.equal(refused.status, 429, await refused.clone().text());
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    const body = (await refused.json()) as Json;
    assert.equal(body.id, 5);
    assert.match(String(body.error?.message), /Too Many Requests: tenant "anonymous" is over its request rate/);
  });
});
