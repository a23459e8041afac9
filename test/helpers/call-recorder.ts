import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tools/call the recorder was sent: its HTTP headers and its params._meta. */
export interface RecordedCall {
  headers: IncomingHttpHeaders;
  meta: Record<string, unknown> | undefined;
}

export interface CallRecorder {
  url: string;
  calls: RecordedCall[];
  close(): void;
}

/**
 * Builds a remote MCP server (Streamable HTTP, JSON answers) with one tool, `echo`, that keeps the headers
 * and _meta of every tools/call it is sent: for tests of the trace context the gateway sends upstream.
 */
export async function startCallRecorder(): Promise<CallRecorder> {
  const calls: RecordedCall[] = [];
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string; params?: Record<string, unknown> };
      if (m.id === undefined) return void res.writeHead(202).end();
      let result: Record<string, unknown> = {};
      if (m.method === 'initialize') result = { protocolVersion: m.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'recorder', version: '1' } };
      if (m.method === 'tools/list') result = { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] };
      if (m.method === 'tools/call') {
        calls.push({ headers: req.headers, meta: m.params?._meta as Record<string, unknown> | undefined });
        result = { content: [{ type: 'text', text: 'ok' }] };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, calls, close: () => (http.closeAllConnections(), http.close()) };
}

/** A gateway config with `tracing` and the recorder at `url` as its one shared legacy upstream "remote", at /mcp. */
export function recordedRemoteConfig(url: string, tracing: Record<string, unknown>) {
  return {
    tracing,
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name: 'remote', transport: 'streamable-http' as const, url, sharing: 'shared' as const, era: 'legacy' as const, healthCheck: { intervalMs: 0 } }],
    endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
  };
}
