import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.js';

/**
 * What the MCP routes read of a request. Fastify's request has all of it; so does a POST served
 * directly from node:http (direct-posts.ts), which never becomes a Fastify request.
 */
export interface EdgeRequest {
  readonly raw: IncomingMessage;
  readonly headers: IncomingHttpHeaders;
  readonly method: string;
  readonly url: string;
  /** The body as text (the edge reads every body as text and parses JSON-RPC itself). */
  body: unknown;
  /** Who is calling: set by the front door before the route runs. */
  principal: Principal | null;
  /**
   * The front door left the tenant's rate to the route: a POST's, counted once its body is read (a
   * token per JSON-RPC request in it), or a request that says another replica forwarded it, which only
   * its body can prove (a signed HTTP forward). Either is counted unless that proof holds; a request
   * the tunnel's mark proves forwarded was counted by the replica the client sent it to.
   */
  rateOwed: boolean;
}

/** What the MCP routes do with a response: Fastify's reply, or a direct POST's (direct-reply.ts). */
export interface EdgeReply {
  readonly raw: ServerResponse;
  code(status: number): EdgeReply;
  header(name: string, value: string): EdgeReply;
  headers(values: Record<string, string>): EdgeReply;
  /** Ends the response: a text body (its Content-Type set before), or none. */
  send(payload?: string): EdgeReply;
  /** The route writes the response itself, on `raw`. */
  hijack(): EdgeReply;
  /**
   * Reports an HTTP refusal the edge answers (sendError): counted and logged by whoever built the edge
   * (EdgeContext.refused). Absent on replies of routes outside the MCP endpoints' plugin.
   */
  refused?(status: number, code: number, message: string): void;
}
