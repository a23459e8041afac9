import { messagesPathOf, ssePathOf } from '../config/schema.js';
import type { EndpointRouter } from '../router/index.js';
import type { EdgeContext } from './edge-context.js';
import { StreamableHttpEndpoint } from './streamable-http-endpoint.js';

/** What a URL path of an endpoint serves: Streamable HTTP, or one of the two legacy HTTP+SSE paths. */
export type EndpointRoute = 'mcp' | 'sse' | 'messages';

/** One endpoint at the edge: its router and its Streamable HTTP handler (with that endpoint's sessions). */
export interface EdgeEndpoint {
  readonly router: EndpointRouter;
  readonly streamable: StreamableHttpEndpoint;
  readonly messagesPath: string;
}

export interface EndpointHit {
  readonly route: EndpointRoute;
  readonly endpoint: EdgeEndpoint;
}

/**
 * The methods a path serves, for its 405's Allow and its preflight: the legacy stream takes GET and its
 * message path POST only (before 2026-12-08 any other method there was 404, and their preflight named
 * GET, POST, DELETE); a Streamable HTTP path without the 2025 era has no GET stream and no session to DELETE.
 */
export function methodsOf(hit: EndpointHit): string {
  if (hit.route === 'sse') return 'GET';
  if (hit.route === 'messages') return 'POST';
  return hit.endpoint.router.config.eras.includes('legacy') ? 'GET, POST, DELETE' : 'POST';
}

/**
 * The endpoints the edge serves, by URL path. Routes are not registered per endpoint (Fastify takes no
 * routes once it listens): one route takes every path that is not the gateway's own, and finds its
 * endpoint here, so a reload that adds, removes or moves an endpoint changes this table in one
 * synchronous step and the next request sees it.
 */
export class EndpointTable {
  readonly #ctx: EdgeContext;
  readonly #endpoints = new Map<EndpointRouter, EdgeEndpoint>();
  #byPath = new Map<string, EndpointHit>();

  constructor(ctx: EdgeContext) {
    this.#ctx = ctx;
  }

  find(path: string): EndpointHit | undefined {
    const hit = this.#byPath.get(path);
    // The HTTP+SSE paths exist only while the endpoint serves the 2025 era (read live: a reload may change it).
    if (hit !== undefined && hit.route !== 'mcp' && !hit.endpoint.router.config.eras.includes('legacy')) return undefined;
    return hit;
  }

  /** Serves exactly these routers: new ones get their handlers, gone ones lose theirs, moved paths follow. */
  sync(routers: readonly EndpointRouter[]): void {
    const live = new Set(routers);
    for (const r of this.#endpoints.keys()) if (!live.has(r)) this.#endpoints.delete(r);
    const byPath = new Map<string, EndpointHit>();
    for (const router of routers) {
      let e = this.#endpoints.get(router);
      if (!e || e.messagesPath !== messagesPathOf(router.config)) {
        e = { router, streamable: e?.streamable ?? new StreamableHttpEndpoint(router, this.#ctx), messagesPath: messagesPathOf(router.config) };
        this.#endpoints.set(router, e);
      }
      byPath.set(router.config.path, { route: 'mcp', endpoint: e });
      byPath.set(ssePathOf(router.config), { route: 'sse', endpoint: e });
      byPath.set(e.messagesPath, { route: 'messages', endpoint: e });
    }
    this.#byPath = byPath;
  }
}
