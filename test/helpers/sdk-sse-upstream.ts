// The official SDK's legacy HTTP+SSE (2024-11-05) server on loopback, one McpServer per stream, and the gateway's
// pool of it built as the gateway builds it (its transport factory): the legacy twin of sdk-http-upstream.ts.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { UpstreamTransports } from '../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../src/upstream/upstream-pool.js';
import type { UpstreamInstance } from '../../src/upstream/upstream-instance.js';
import { testCaller } from './sdk-http-upstream.js';

export interface SdkSseUpstream {
  url: string;
  /** SSE streams opened: one per connection, another after each reconnect. */
  streams(): number;
  close(): void;
}

/**
 * Each GET stream a session of its own McpServer, its tools from `tools`. `intercept`: sees each POST first, and
 * takes it (true) or leaves it to the SDK's transport (false).
 */
export async function startSdkSseUpstream(tools: (s: McpServer) => void, intercept?: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<SdkSseUpstream> {
  const transports = new Map<string, SSEServerTransport>();
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      const t = new SSEServerTransport('/messages', res);
      transports.set(t.sessionId, t);
      const mcp = new McpServer({ name: 'u', version: '1' });
      tools(mcp);
      return void mcp.connect(t);
    }
    if (intercept?.(req, res)) return;
    const t = transports.get(new URL(req.url!, 'http://x').searchParams.get('sessionId') ?? '');
    if (!t) return void res.writeHead(404).end();
    void t.handlePostMessage(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`,
    streams: () => transports.size,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface SsePool {
  pool: UpstreamPool;
  /** The instance serving testCaller. */
  instance: UpstreamInstance;
  close(): Promise<void>;
}

/** The gateway's pool of one legacy HTTP+SSE upstream "u" at `url`, started; `extra` is merged into its config. */
export async function startSsePool(url: string, extra: Record<string, unknown> = {}): Promise<SsePool> {
  const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'sse', url, healthCheck: { intervalMs: 0 }, ...extra }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
  const factory = new UpstreamTransports();
  const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), factory.create);
  const close = async () => {
    await pool.close();
    await factory.close();
  };
  try {
    await pool.start();
  } catch (err) {
    await close();
    throw err;
  }
  return { pool, instance: pool.instanceFor(testCaller), close };
}
