import type { EdgeReply, EdgeRequest } from './edge-exchange.js';
import { samePrincipal, type Principal } from '../auth/principal.js';
import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { EndpointRouter } from '../router/index.js';
import { HAND_BACK_REASON, handedOver, isSupportedVersion, principalOf, TAKEN_OVER_REASON, type ClientSession, type SessionRecord } from '../session/index.js';
import type { EdgeContext } from './edge-context.js';
import { sendError, sessionRefusal } from './replies.js';
import { header, SESSION_HEADER } from './request-header.js';
import type { StreamableSessions } from './streamable-sessions.js';

/**
 * Finds the Streamable HTTP session a request names: here, on another replica (the request is
 * forwarded there), or in the store with its owner gone (the session is taken over).
 */
export class SessionLocator {
  readonly #router: EndpointRouter;
  readonly #ctx: EdgeContext;
  readonly #sessions: StreamableSessions;
  /**
   * Sessions being taken over here, by id. The session is in the registry from the start of its restore
   * (its transport must catch events), but it is not initialized until the restore ends: a concurrent
   * request of the same session (the client's GET stream reconnecting while a POST arrives) waits for it.
   */
  readonly #restoring = new Map<string, Promise<ClientSession | undefined>>();

  constructor(router: EndpointRouter, ctx: EdgeContext, sessions: StreamableSessions) {
    this.#router = router;
    this.#ctx = ctx;
    this.#sessions = sessions;
  }

  /**
   * The request's session, or undefined when the request has been answered (or forwarded). `requestId`:
   * the id of the POST's (first) request, which every refusal carries when it could be read.
   */
  async find(req: EdgeRequest, reply: EdgeReply, principal: Principal, requestId: RequestId | null = null): Promise<ClientSession | undefined> {
    const id = header(req, SESSION_HEADER);
    if (!id) {
      sendError(reply, 400, 'Bad Request: Mcp-Session-Id header is required', { code: ErrorCode.InvalidRequest, id: requestId });
      return undefined;
    }
    // A session held here is found without a promise (the hot path); elsewhere the store is asked. A store
    // that cannot be read proves nothing about the session: 503 and retry, never 404 (start over).
    const restoring = this.#restoring.size === 0 ? undefined : this.#restoring.get(id);
    // A takeover that failed for now (rejected) leaves this request to locate the session afresh.
    const local = restoring ? await restoring.catch(() => undefined) : this.#ctx.registry.get(id);
    const found =
      local !== undefined || !this.#ctx.cluster
        ? local
        : await this.#locate(req, reply, id, principal).catch((err: GatewayError) => {
            // The wait a refusal computed (a takeover at the tenant's session limit), else a moment.
            const r = sessionRefusal(err, 2);
            sendError(reply, r.status, r.message, { ...r.opts, id: requestId });
            return 'forwarded' as const; // answered
          });
    if (found === 'forwarded') return undefined;
    const s = found;

    // Another principal's session is answered exactly like one that does not exist.
    if (!s || s.endpoint !== this.#router || s.kind !== 'streamable-http' || !samePrincipal(s.principal, principal)) {
      sendError(reply, 404, 'Session not found: it ended or never existed; send initialize to start a new one', { code: ErrorCode.InvalidRequest, id: requestId });
      return undefined;
    }
    s.guard.refresh(principal);
    const version = header(req, 'mcp-protocol-version');
    if (version !== undefined && !isSupportedVersion(version)) {
      sendError(reply, 400, `Bad Request: unsupported MCP-Protocol-Version "${version.slice(0, 32)}"`, { code: ErrorCode.InvalidRequest, id: requestId });
      return undefined;
    }
    return s;
  }

  /**
   * The session named by the request, wherever it lives. Not here but in Redis: forwarded to its live
   * owner (then 'forwarded': the owner answers), or taken over when the owner is gone. Throws
   * SWB_STORE_UNAVAILABLE when the store cannot tell.
   */
  async #locate(req: EdgeRequest, reply: EdgeReply, id: string, principal: Principal, retry = true): Promise<ClientSession | 'forwarded' | undefined> {
    const cluster = this.#ctx.cluster;
    const local = this.#restoring.get(id) ?? this.#ctx.registry.get(id);
    if (local || !cluster) return local;
    const where = await cluster.locate(id, cluster.forwarded(req));
    // Taken over here by a concurrent request while the store was asked: that restore is the session.
    const meanwhile = this.#restoring.get(id) ?? this.#ctx.registry.get(id);
    if (meanwhile) return meanwhile;
    if (where.kind === 'forward') {
      // The owner's answer (possibly a stream) is piped through: not Fastify's to send.
      const body = typeof req.body === 'string' ? req.body : undefined;
      const sent = await cluster.forward(where.owner, { method: req.method, url: req.url, headers: req.headers, body }, () => reply.hijack().raw);
      if (sent === 'relayed') return 'forwarded';
      // The owner is gone though its heartbeat lingers: taken over here, like an owner whose heartbeat expired.
    } else if (where.kind !== 'restore') return undefined;
    const r = where.record;
    // Only a Streamable HTTP session on this endpoint, of this principal, whose upstream state can move.
    if (r.kind !== 'streamable-http' || r.endpoint !== this.#router.config.path || !samePrincipal(principalOf(r), principal) || !r.movable) return undefined;
    // Another replica took it over first (a concurrent request of the same session): asked again, once, it forwards there.
    if (!(await cluster.claim(id, where.owner))) {
      return this.#restoring.get(id) ?? this.#ctx.registry.get(id) ?? (retry ? this.#locate(req, reply, id, principal, false) : undefined);
    }
    const restored = this.#restore(r, principal).finally(() => this.#restoring.delete(id));
    this.#restoring.set(id, restored);
    return restored;
  }

  /** Takes over a session whose owner is gone (Redis): rebuilt here from its record. */
  async #restore(record: SessionRecord, principal: Principal): Promise<ClientSession | undefined> {
    let session: ClientSession;
    try {
      session = await this.#sessions.create(principal, record.id);
    } catch (err) {
      // Refused here (this replica is full or shutting down, the tenant at its session limit): the claim
      // is let go, or every replica would forward the session to this one and get the same refusal
      // until a slot freed here or it exited. Released, the client's retry elsewhere takes it over.
      await this.#ctx.cluster!.ended(record.id, true);
      throw err;
    }
    let held: 'held' | 'ended' | 'taken' | 'closed';
    try {
      await this.#sessions.transportOf(session).continueFrom(this.#ctx.registry.events);
      held = (await session.restore(record)) ? await this.#ctx.cluster!.hold(session.record()) : 'closed';
    } catch (err) {
      // A passing failure (the store, an upstream not ready yet) hands the session back, record and log
      // kept, for the client's retry (503): a 404 would tell it to start over. Anything else ends it.
      const passing = !(err instanceof GatewayError) || (err.status ?? 500) >= 500;
      await session.close(passing ? HAND_BACK_REASON : 'could not be taken over');
      if (passing) throw new GatewayError('SWB_STORE_UNAVAILABLE', 'Service Unavailable: the session could not be taken over just now; retry');
      return undefined;
    }
    if (held === 'held') return session;
    if (held === 'closed') {
      // Closed here while it was rebuilt (its close has run): by a shutdown, handed over for another
      // replica to take over on the client's retry (503); by an operator, ended (not found).
      if (handedOver(session, session.closeReason)) throw new GatewayError('SWB_STORE_UNAVAILABLE', 'Service Unavailable: the session was handed to another replica while it was taken over here; retry');
      return undefined;
    }
    // Owned by another replica by now (it took the session over while this one looked gone): the copy here
    // ends, record and log left to that one, which the client's retry finds (503). Its record removed since
    // the claim (the admin API of a replica that read this one as gone): ended, not found.
    await session.close(held === 'taken' ? TAKEN_OVER_REASON : 'ended while it was taken over');
    if (held === 'taken') throw new GatewayError('SWB_STORE_UNAVAILABLE', 'Service Unavailable: the session moved to another replica meanwhile; retry');
    return undefined;
  }
}
