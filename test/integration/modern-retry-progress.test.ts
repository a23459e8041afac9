// Progress during a 2026-07-28 call that went through an input_required round: the first attempt has
// been answered (input_required), so only the retry is active, and the spec lets progress name only a
// token "provided in an active request". What the upstream reports after the round goes out on the
// retry's stream with the retry's own token, and not at all when the retry asked for none.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { MODERN_VERSION } from '../helpers/modern-http.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'progress-after-input-server.mjs');
const TOOL = 'ask_then_progress';

/** One modern tools/call POST; every JSON-RPC message of its answer (one JSON body, or the SSE stream's). */
async function call(gw: RunningGateway, id: string, extra: Record<string, unknown>, progressToken?: string): Promise<any[]> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': TOOL };
  const _meta: Record<string, unknown> = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
  if (progressToken !== undefined) _meta.progressToken = progressToken;
  const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: TOOL, arguments: {}, ...extra, _meta } }) });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  if (!(res.headers.get('content-type') ?? '').includes('event-stream')) return [JSON.parse(text)];
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
}

/** The first attempt's input_required round: its one key and its state. */
async function firstRound(gw: RunningGateway, id: string, progressToken: string): Promise<{ key: string; state: string }> {
  const [answer] = await call(gw, id, {}, progressToken);
  assert.equal(answer.result?.resultType, 'input_required', JSON.stringify(answer));
  return { key: Object.keys(answer.result.inputRequests)[0]!, state: answer.result.requestState };
}

describe('2026-07-28: progress after an input_required round', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'asker', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE], sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['asker'] }],
    });
  });
  after(() => gw.close());

  it("goes out with the retry's own progress token", async () => {
    const { key, state } = await firstRound(gw, 'first-1', 'token-of-the-first');
    const messages = await call(gw, 'retry-1', { inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } }, requestState: state }, 'token-of-the-retry');
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    assert.deepEqual(progress.map((m) => m.params.progressToken), ['token-of-the-retry'], JSON.stringify(messages));
    assert.match(JSON.stringify(messages.at(-1).result.content), /Hello, Ada!/);
  });

  it('is not sent to a retry that asked for no progress', async () => {
    const { key, state } = await firstRound(gw, 'first-2', 'token-of-the-first');
    const messages = await call(gw, 'retry-2', { inputResponses: { [key]: { action: 'accept', content: { name: 'Grace' } } }, requestState: state });
    assert.deepEqual(messages.filter((m) => m.method === 'notifications/progress'), [], JSON.stringify(messages));
    assert.match(JSON.stringify(messages.at(-1).result.content), /Hello, Grace!/);
  });
});
