// A 2026-07-28 request names its log level in `_meta["io.modelcontextprotocol/logLevel"]`; a 2025 upstream
// has only logging/setLevel, and until told a level sends what it chooses (here: warnings and worse). The
// gateway filtered the upstream's messages by the request's level but never set the upstream's, so a
// request asking for debug got no debug or info message. The level a request asks for is now set upstream
// (the least severe asked so far: requests of other levels still get theirs, the gateway filtering each).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { MODERN_VERSION } from '../helpers/modern-http.js';

const upstream = (name: string, sharing: 'shared' | 'per-session', env?: Record<string, string>) => ({
  name,
  ...(env && { env }),
  transport: 'stdio' as const,
  command: process.execPath,
  args: ['test/fixtures/leveled-log-server.mjs'],
  sandbox: 'none' as const,
  sharing,
  pool: sharing === 'shared' ? { size: 1 } : { size: 1, warm: 1, max: 10 },
});

let nextId = 1;

/** The levels of the log messages a modern call of log_each on `path` gets, and its answer's text. */
async function logged(gw: RunningGateway, path: string, logLevel: string | undefined): Promise<{ levels: string[]; text: string }> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'log_each' };
  const _meta: Record<string, unknown> = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
  if (logLevel) _meta['io.modelcontextprotocol/logLevel'] = logLevel;
  const res = await fetch(gw.url(path), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'log_each', arguments: {}, _meta } }) });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  const messages = (res.headers.get('content-type') ?? '').includes('event-stream') ? body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))) : [JSON.parse(body)];
  const levels = messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.level as string);
  return { levels, text: messages.at(-1)?.result?.content?.[0]?.text };
}

describe('a 2026-07-28 request\'s log level, through a 2025 upstream', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [upstream('own', 'per-session'), upstream('common', 'shared'), upstream('flaky', 'per-session', { FAIL_SET_LEVEL: '1' })],
      endpoints: [
        { path: '/own', upstreams: ['own'] },
        { path: '/common', upstreams: ['common'] },
        { path: '/flaky', upstreams: ['flaky'] },
      ],
    });
  });
  after(() => gw.close());

  for (const path of ['/own', '/common']) {
    it(`${path}: each request gets the messages at or above its own level, and none without one`, async () => {
      assert.deepEqual(await logged(gw, path, 'error'), { levels: ['error'], text: 'logged' });
      assert.deepEqual(await logged(gw, path, 'debug'), { levels: ['debug', 'info', 'warning', 'error'], text: 'logged' });
      assert.deepEqual(await logged(gw, path, 'info'), { levels: ['info', 'warning', 'error'], text: 'logged' });
      assert.deepEqual(await logged(gw, path, undefined), { levels: [], text: 'logged' });
    });
  }

  // The standing remembered a level as set when its setLevel failed: no later request tried again, so the
  // upstream stayed at its default until a restart or a reload.
  it('a setLevel the upstream refused is tried again by the next request naming that level', async () => {
    assert.deepEqual(await logged(gw, '/flaky', 'debug'), { levels: ['warning', 'error'], text: 'logged' }, 'the first setLevel is refused: the default level');
    assert.deepEqual(await logged(gw, '/flaky', 'debug'), { levels: ['debug', 'info', 'warning', 'error'], text: 'logged' });
  });
});
