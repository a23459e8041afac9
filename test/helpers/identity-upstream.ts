// A remote MCP upstream that acts on a user's data, for the per-user credential suites: the official SDK's
// McpServer over Streamable HTTP on a loopback port. Every HTTP request's bearer token is verified
// (signature by the authorization server's keys, issuer, audience = this upstream, `act` = the gateway)
// before the SDK sees it; an upstream session stays bound to the subject that opened it. The tool
// `whoami {claimed}` answers with the verified subject and records a call as crossed when the client
// that made it (`claimed`) is someone else.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createLocalJWKSet, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { z } from 'zod';

export interface IdentityUpstream {
  url: string;
  /** Calls of whoami per verified subject. */
  calls: Map<string, number>;
  /** Calls whose verified subject was not the client that made them. */
  crossed: number;
  /** Requests whose bearer did not verify (answered 401), by reason. */
  rejected: string[];
  /** Every bearer token presented (to check none is a client's own token). */
  bearers: Set<string>;
  /** Upstream sessions opened, per subject. */
  sessions: Map<string, number>;
  /** Each whoami call's `claimed` and its token's `subject_scope` (the user's token it was exchanged from), in order. */
  seen: Array<{ claimed: string; subjectScope: unknown }>;
  /** Upstream sessions open now (ended by the gateway's DELETE). */
  open(): number;
  close(): Promise<void>;
}

/** `actor`: the `act` every token must name (token exchange); absent, tokens are the user's own (user consent). `authorizationServer`: published as RFC 9728 metadata. */
export async function startIdentityUpstream(o: { issuer: string; audience: string; actor?: string; keys: () => JWK[]; authorizationServer?: string }): Promise<IdentityUpstream> {
  const transports = new Map<string, { transport: StreamableHTTPServerTransport; sub: string }>();
  const state: Omit<IdentityUpstream, 'url' | 'close' | 'open'> = { calls: new Map(), crossed: 0, rejected: [], bearers: new Set(), sessions: new Map(), seen: [] };

  const verify = async (req: http.IncomingMessage): Promise<{ token: string; claims: JWTPayload } | string> => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m) return 'no bearer';
    state.bearers.add(m[1]!);
    try {
      const { payload } = await jwtVerify(m[1]!, createLocalJWKSet({ keys: o.keys() }), { issuer: o.issuer, audience: o.audience });
      if (o.actor !== undefined && (payload.act as { sub?: string } | undefined)?.sub !== o.actor) return 'act is not the gateway';
      return { token: m[1]!, claims: payload };
    } catch (err) {
      return (err as Error).message;
    }
  };

  const newServer = () => {
    const server = new McpServer({ name: 'identity-upstream', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the upstream sees', inputSchema: { claimed: z.string() } }, async ({ claimed }, extra) => {
      const sub = String(extra.authInfo?.extra?.sub);
      state.seen.push({ claimed, subjectScope: extra.authInfo?.extra?.subjectScope });
      state.calls.set(sub, (state.calls.get(sub) ?? 0) + 1);
      if (sub !== claimed) state.crossed++;
      return { content: [{ type: 'text', text: sub }] };
    });
    return server;
  };

  const httpServer = http.createServer(async (req, res) => {
    if (req.url?.startsWith('/.well-known/oauth-protected-resource') && o.authorizationServer) {
      const { port } = httpServer.address() as AddressInfo;
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resource: `http://127.0.0.1:${port}/mcp`, authorization_servers: [o.authorizationServer] }));
    }
    const v = await verify(req);
    if (typeof v === 'string') {
      state.rejected.push(v);
      return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    }
    const sub = v.claims.sub!;
    (req as http.IncomingMessage & { auth?: unknown }).auth = { token: v.token, clientId: 'switchboard', scopes: [], extra: { sub, subjectScope: v.claims.subject_scope } };
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let entry = sid ? transports.get(sid) : undefined;
    if (sid && !entry) return void res.writeHead(404).end();
    if (entry && entry.sub !== sub) {
      // A session opened by one user and used with another's token: the cross-user bug itself.
      state.crossed++;
      return void res.writeHead(403).end();
    }
    if (!entry) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, { transport, sub });
          state.sessions.set(sub, (state.sessions.get(sub) ?? 0) + 1);
        },
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
      entry = { transport, sub };
    }
    await entry.transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/mcp`,
    open: () => transports.size,
    close: async () => {
      httpServer.closeAllConnections();
      await new Promise<void>((r) => httpServer.close(() => r()));
    },
  });
}
