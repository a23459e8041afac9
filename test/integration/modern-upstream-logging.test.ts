// Log messages through a 2026-07-28 upstream. That era has no logging/setLevel: a request asks for log
// messages with `_meta["io.modelcontextprotocol/logLevel"]`, and gets none without it. The gateway
// advertises the upstream's logging capability to a 2025 client, which then sets a level and expects the
// messages of its calls; a 2026-07-28 client names its level per request and expects them too.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { MODERN_VERSION } from '../helpers/modern-http.js';
import { startModernServer } from '../helpers/modern-server.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

/** A modern tools/call whose answer is read whole (an SSE stream's every message, in order). */
async function modernCallMessages(gw: RunningGateway, id: number, name: string, meta: Record<string, unknown>): Promise<any[]> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': name };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {}, ...meta };
  const res = await fetch(gw.url(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta } }) });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('event-stream')) return [JSON.parse(text)];
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
}

for (const sharing of ['shared', 'per-session'] as const) {
  describe(`log messages through a 2026-07-28 upstream (${sharing})`, () => {
    let upstream: { child: ChildProcess; url: URL };
    let gw: RunningGateway;
    before(async () => {
      upstream = await startModernServer();
      gw = await startGateway({
        pinning: { mode: 'off' },
        upstreams: [{ name: 'modern', transport: 'streamable-http', url: upstream.url.href, sharing, pool: sharing === 'shared' ? { size: 1 } : { size: 1, warm: 0, max: 10 } }],
        endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
      });
    });
    after(async () => {
      await gw.close();
      upstream.child.kill('SIGTERM');
    });

    it('a 2025 client sets its level (the capability the gateway advertised) and gets its calls\' log messages', async () => {
      const client = await connectClient(gw, 'streamable-http');
      const logs: any[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
      try {
        assert.ok(client.getServerCapabilities()?.logging, 'the upstream offers logging');
        assert.deepEqual(await client.setLoggingLevel('info'), {});
        assert.equal(textOf(await client.callTool({ name: 'test_tool_with_logging', arguments: {} })), 'Logging evaluated');
        await until('the three log messages of the call', () => logs.length >= 3);
        assert.deepEqual(logs.map((l) => [l.level, l.data]), [['info', 'Logging tool started'], ['info', 'Logging tool working'], ['info', 'Logging tool done']]);
        // A level above theirs: none.
        logs.length = 0;
        await client.setLoggingLevel('error');
        assert.equal(textOf(await client.callTool({ name: 'test_tool_with_logging', arguments: {} })), 'Logging evaluated');
        assert.deepEqual(logs, []);
        // A level that is none of the eight is refused, as a 2025 server refuses it, and spoils no later call.
        await assert.rejects(client.request({ method: 'logging/setLevel', params: { level: 'verbose' } }, (await import('@modelcontextprotocol/sdk/types.js')).EmptyResultSchema), (e: any) => e.code === -32602);
        assert.equal(textOf(await client.callTool({ name: 'test_tool_with_logging', arguments: {} })), 'Logging evaluated');
      } finally {
        await client.close();
      }
    });

    it('a 2026-07-28 request that names a level gets the log messages; one that names none gets none', async () => {
      const asked = await modernCallMessages(gw, 1, 'test_tool_with_logging', { 'io.modelcontextprotocol/logLevel': 'info' });
      const logs = asked.filter((m) => m.method === 'notifications/message');
      assert.deepEqual(logs.map((m) => m.params.data), ['Logging tool started', 'Logging tool working', 'Logging tool done'], JSON.stringify(asked));
      assert.equal(asked.at(-1).result?.content?.[0]?.text, 'Logging evaluated', JSON.stringify(asked));
      const silent = await modernCallMessages(gw, 2, 'test_tool_with_logging', {});
      assert.deepEqual(silent.filter((m) => m.method === 'notifications/message'), [], JSON.stringify(silent));
      assert.equal(silent.at(-1).result?.content?.[0]?.text, 'Logging evaluated');
    });
  });
}
