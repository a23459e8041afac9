import type { Principal } from '../auth/principal.js';
import type { EndpointRouter } from '../router/index.js';
import type { ClientSession } from '../session/index.js';
import type { EdgeContext } from './edge-context.js';
import { StreamableSessionTransport } from './streamable-session-transport.js';

/**
 * The Streamable HTTP sessions of one endpoint, each created with its own transport; the routes reach
 * a session's transport (its pending ids, its streams) through the session.
 */
export class StreamableSessions {
  readonly #router: EndpointRouter;
  readonly #ctx: EdgeContext;
  readonly #transports = new WeakMap<ClientSession, StreamableSessionTransport>();

  constructor(router: EndpointRouter, ctx: EdgeContext) {
    this.#router = router;
    this.#ctx = ctx;
  }

  /** A new session, or with restoreId one taken over from its record. Throws a GatewayError when refused. */
  async create(principal: Principal, restoreId?: string): Promise<ClientSession> {
    let session!: ClientSession;
    let transport!: StreamableSessionTransport;
    session = await this.#ctx.registry.create('streamable-http', this.#router, principal, (id) => (transport = this.#newTransport(id, () => session)), restoreId);
    this.#transports.set(session, transport);
    return session;
  }

  transportOf(session: ClientSession): StreamableSessionTransport {
    return this.#transports.get(session)!;
  }

  #newTransport(id: string, session: () => ClientSession): StreamableSessionTransport {
    return new StreamableSessionTransport({
      sessionId: id,
      hub: this.#ctx.hub,
      events: this.#ctx.registry.events,
      resumable: this.#ctx.resumable,
      retryMs: 1000,
      protocolVersion: () => session().protocolVersion,
      onStreamsChanged: (d) => (d > 0 ? session().activity.streamOpened() : session().activity.streamClosed()),
    });
  }
}
