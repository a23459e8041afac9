import type { IncomingHttpHeaders } from 'node:http';
import { startJsonRemote } from './json-remote.js';

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
 * Builds a remote MCP server (startJsonRemote) with one tool, `echo`, that keeps the headers
 * and _meta of every tools/call it is sent: for tests of the trace context the gateway sends upstream.
 */
export async function startCallRecorder(): Promise<CallRecorder> {
  const calls: RecordedCall[] = [];
  const remote = await startJsonRemote((method, params, req) => {
    if (method === 'initialize') return { protocolVersion: params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'recorder', version: '1' } };
    if (method === 'tools/list') return { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] };
    if (method !== 'tools/call') return {};
    calls.push({ headers: req.headers, meta: params?._meta as Record<string, unknown> | undefined });
    return { content: [{ type: 'text', text: 'ok' }] };
  });
  return { ...remote, calls };
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
