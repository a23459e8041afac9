// A remote upstream made of the official SDK's Streamable HTTP server on loopback, and the gateway's side of
// it without the rest of the gateway: one UpstreamPool whose instances speak to it over the real transport.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport, type StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { GatewayError } from '../../src/errors.js';
import { StreamableHttpClientTransport } from '../../src/upstream/streamable-http-client.js';
import { startRemotePool as startPool, type RemotePool } from './remote-pool.js';

export interface SdkUpstream {
  url: string;
  /** POST responses the server has not finished or seen closed. */
  openPosts(): number;
  /** The methods of the messages it received, in order. */
  received: string[];
  /** GET requests with a Last-Event-ID: streams resumed. */
  resumes(): number;
  close(): void;
}

/**
 * One McpServer per session, its tools from `tools`; `options` go to each session's transport. `intercept`: sees
 * each request first, and takes it (true) or leaves it to the SDK's transport (false).
 */
export async function startSdkUpstream(tools: (s: McpServer) => void, options: Partial<StreamableHTTPServerTransportOptions> = {}, intercept?: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<SdkUpstream> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const received: string[] = [];
  let open = 0;
  let resumes = 0;
  const http = createServer(async (req, res) => {
    if (req.method === 'GET' && req.headers['last-event-id']) resumes++;
    if (intercept?.(req, res)) return;
    if (req.method === 'POST') {
      open++;
      res.on('close', () => open--);
    }
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let t = sid ? sessions.get(sid) : undefined;
    if (!t) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, created), ...options });
      t = created;
      const server = new McpServer({ name: 'sdk-upstream', version: '1' }, { capabilities: { logging: {} } });
      tools(server);
      await server.connect(t);
      const inner = t.onmessage;
      t.onmessage = (m, extra) => {
        if ('method' in m) received.push(m.method);
        inner?.(m, extra);
      };
    }
    await t.handleRequest(req, res);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    openPosts: () => open,
    resumes: () => resumes,
    received,
    close: () => {
      http.closeAllConnections();
      http.close();
    },
  };
}

export type { RemotePool };

/** The gateway's pool of one legacy-era remote upstream at `url`; `extra` is merged into its config. */
export function startRemotePool(url: string, extra: Record<string, unknown> = {}): Promise<RemotePool> {
  return startPool(
    { transport: 'streamable-http', url, era: 'legacy', sharing: 'shared', healthCheck: { intervalMs: 0 }, ...extra },
    (u, agent, log) => new StreamableHttpClientTransport(u, agent, undefined, log),
    // As the gateway builds it (transport-factory): the connection bound and the headers timeout.
    (u) => ({ connections: u.http.maxConnections, headersTimeout: u.http.headersTimeoutMs }),
  );
}

/** A caller (client session) for requests put to an instance directly. */
export const testCaller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

/**
 * How a tools/call put to a remote pool on `url` fails, as code, message and details. The request timeout is
 * long enough (4 s) that a call left waiting for an answer says SWB_UPSTREAM_TIMEOUT; the circuit stays closed.
 */
export async function callFailure(url: string): Promise<{ code: string; message: string; details: Record<string, unknown> | undefined }> {
  const gw = await startRemotePool(url, { requestTimeoutMs: 4000, circuitBreaker: { failureThreshold: 100 } });
  try {
    await gw.instance.request('tools/call', { name: 'x', arguments: {} }, { caller: testCaller });
    throw new Error('the call was answered');
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { code: err.code, message: err.message, details: err.details };
  } finally {
    await gw.close();
  }
}
