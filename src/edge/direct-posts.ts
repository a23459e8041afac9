import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConnectionLimits } from './connection-limits.js';
import { isJsonContentType } from './content-type.js';
import { DirectReply } from './direct-reply.js';
import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import type { EndpointHit } from './endpoint-table.js';
import { readBody } from './read-body.js';

/** What the edge plugin hands the direct path: the same steps its Fastify route runs, in the same order. */
export interface DirectRoutes {
  /** The endpoint and route a URL path names, if any. */
  find(path: string): EndpointHit | undefined;
  /** The endpoint's front door: undefined when it let the request through, else it has answered. */
  door(req: EdgeRequest, reply: EdgeReply, hit: EndpointHit): Promise<unknown>;
  /** The route itself. */
  serve(req: EdgeRequest, reply: EdgeReply, hit: EndpointHit): unknown;
  /** The edge's answer to an error a route threw (its Fastify error handler's, for the same errors). */
  failed(err: unknown, reply: EdgeReply): void;
  readonly limits: ConnectionLimits | undefined;
  readonly bodyLimit: number;
  /** Each refusal the edge answers (EdgeContext.refused), as on the Fastify route. */
  readonly refused?: ((status: number, code: number, message: string) => void) | undefined;
}

/** The path of a request URL (its query string dropped), as the endpoint table matches it. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** A Content-Length of plain digits, as a number (undefined for anything else). */
function declaredLength(v: string | undefined): number | undefined {
  return v !== undefined && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
}

/**
 * The hot path of the edge served straight from node:http: a POST of client messages (Streamable HTTP,
 * or a legacy session's message) with a JSON body of declared length, on an endpoint's path. Measured,
 * Fastify's own handling of a request (its request and reply objects, hooks, routing and body parser)
 * cost about 10 µs of CPU per proxied call here, more than the thin proxy's whole share of a call's
 * HTTP work (README, Performance). Everything a route does is the same code as on the Fastify route:
 * the front door (Host/Origin, authentication, the tenant's grant) before a byte of the body is read,
 * the connection limits' body timer, the route (which takes the tenant's rate), its errors. Anything
 * else (another method, chunked or oversized bodies, other media types, a path no endpoint serves, the
 * server closing) goes to Fastify as before, whose answers (413, 415, 404, 503) stay the only ones.
 */
export class DirectPosts {
  #routes: DirectRoutes | undefined;
  #closing = false;

  /** From the edge plugin, once its endpoint table and front doors exist. */
  install(routes: DirectRoutes): void {
    this.#routes = routes;
  }

  /** From the server's close: every request goes to Fastify, which answers 503 while it closes. */
  close(): void {
    this.#closing = true;
  }

  /** Serves the request and returns true, or returns false for Fastify to serve it. */
  take(raw: IncomingMessage, res: ServerResponse): boolean {
    const routes = this.#routes;
    if (!routes || this.#closing || raw.method !== 'POST') return false;
    const h = raw.headers;
    if (h['transfer-encoding'] !== undefined || !isJsonContentType(h['content-type'])) return false;
    const length = declaredLength(h['content-length']);
    if (length === undefined || length === 0 || length > routes.bodyLimit) return false;
    const url = raw.url ?? '/';
    const hit = routes.find(pathOf(url));
    if (!hit || hit.route === 'sse') return false;
    void this.#run(routes, hit, { raw, headers: h, method: 'POST', url, body: undefined, principal: null, rateOwed: false }, new DirectReply(res, routes.refused), length);
    return true;
  }

  async #run(routes: DirectRoutes, hit: EndpointHit, req: EdgeRequest, reply: DirectReply, length: number): Promise<void> {
    try {
      if ((await routes.door(req, reply, hit)) !== undefined) return;
      routes.limits?.watchBody(req.raw);
      const body = await readBody(req.raw, length);
      // The client went away before its body was in: there is no one to answer.
      if (body === undefined) return;
      routes.limits?.bodyRead(req.raw);
      req.body = body;
      await routes.serve(req, reply, hit);
    } catch (err) {
      routes.failed(err, reply);
    }
  }
}
