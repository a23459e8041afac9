// The official SDK's legacy HTTP+SSE (2024-11-05) server on loopback, one McpServer per stream: the legacy twin
// of sdk-http-upstream.ts (the gateway's side: legacySsePool in legacy-sse-upstream.ts).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';

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
