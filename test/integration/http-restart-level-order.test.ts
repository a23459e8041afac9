// A remote (Streamable HTTP) upstream that forgot its session is re-initialized, and told again the log level
// it was set to (instance-renewals). On stdio the setLevel goes ahead of the calls that waited for the restart
// on the one pipe; over HTTP each is a POST of its own, and the upstream may take the call first: the call a
// 2025 session made after asking for debug ran at the new server's default (warnings and worse).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { LoggingMessageNotificationSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const ALL = ['debug', 'info', 'warning', 'error'];

/**
 * The SDK's server, one per session, sending only what its level lets through (until set: warnings and worse).
 * A setLevel is applied once a call has come meanwhile, or after 2 s: a server that takes its POSTs in the order
 * it likes. forget(): every session is forgotten (404), as an upstream that restarted.
 */
async function leveledHttpUpstream(): Promise<{ url: string; forget(): void; server: Server }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer(async (req, res) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    if (sid && !sessions.has(sid)) return void res.writeHead(404).end();
    let t = sid ? sessions.get(sid) : undefined;
    if (!t) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, created) });
      t = created;
      const mcp = new McpServer({ name: 'leveled-http', version: '1' }, { capabilities: { logging: {} } });
      let level = 'warning';
      let called: () => void = () => {};
      mcp.server.setRequestHandler(SetLevelRequestSchema, async (request) => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2000);
          called = () => (clearTimeout(timer), resolve());
        });
        level = request.params.level;
        return {};
      });
      mcp.registerTool('log_each', { description: 'Logs at four levels' }, async (extra) => {
        const at = level; // the level in force as the call came
        called();
        for (const l of ALL) {
          if (LEVELS.indexOf(l) >= LEVELS.indexOf(at)) await extra.sendNotification({ method: 'notifications/message', params: { level: l as 'debug', data: `at ${l}` } });
        }
        return { content: [{ type: 'text', text: 'logged' }] };
      });
      await mcp.connect(t);
    }
    await t.handleRequest(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, forget: () => sessions.clear(), server };
}

/** The levels of the log messages a 2025 session's call of log_each gets. */
async function sessionLevels(client: Client): Promise<string[]> {
  const levels: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void levels.push(n.params.level));
  await client.callTool({ name: 'log_each', arguments: {} });
  return levels;
}

describe('the log level, after a remote upstream forgot its session', () => {
  let gw: RunningGateway;
  let upstream: Awaited<ReturnType<typeof leveledHttpUpstream>>;
  before(async () => {
    upstream = await leveledHttpUpstream();
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'remote', transport: 'streamable-http', url: upstream.url, era: 'legacy', sharing: 'shared', pool: { size: 1 }, healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
    });
  });
  after(async () => {
    await gw.close();
    upstream.server.closeAllConnections();
    upstream.server.close();
  });

  it('the call that waited for the re-initialize runs at the level set again', { timeout: 30_000 }, async () => {
    const client = await connectClient(gw, 'streamable-http');
    try {
      await client.setLoggingLevel('debug');
      assert.deepEqual(await sessionLevels(client), ALL);
      upstream.forget();
      assert.deepEqual(await sessionLevels(client), ALL, 'the call went on after the new session was set to debug');
    } finally {
      await client.close();
    }
  });
});
