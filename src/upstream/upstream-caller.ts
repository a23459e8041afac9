import type { Cancellation } from '../jsonrpc/cancellation.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { UpstreamUser } from './upstream-user.js';

/**
 * The client session on whose behalf the gateway talks to an upstream, as the upstream side sees it.
 * Messages the upstream starts (sampling, elicitation, roots, logs, resource updates) are delivered
 * through it, so the upstream layer never needs to know about HTTP or sessions.
 */
export interface UpstreamCaller {
  readonly id: string;
  /** per-tenant upstreams give each tenant its own instances. */
  readonly tenant: string;
  /** per-user upstreams give each principal its own instances; a caller without one cannot use them. */
  readonly principal?: UpstreamUser | undefined;
  /** The session has ended: a per-session pool drops its place in the queue rather than start an instance for it. */
  readonly closed?: boolean;
  /** A 2026-07-28 request's standing (its era's codes reach it); absent: a 2025 session. */
  readonly era?: 'modern';
  /**
   * Its principal follows the latest of several clients' tokens (a 2026-07-28 standing of a whole subject,
   * left from before a reload gave its endpoint a token-exchange upstream): no one token is its to exchange,
   * and such an upstream starts no instance for it (PerUserStrategy).
   */
  readonly sharedByTokens?: boolean;
  /**
   * A server→client request (sampling/createMessage, elicitation/create, roots/list). `onProgress`: told
   * each notifications/progress the client reports on it, under the upstream's own token (when it gave one).
   * `upstream`: the one that asks (its elicitation is shown as its own, never as the gateway's).
   */
  clientRequest(
    method: string,
    params: Record<string, unknown> | undefined,
    relatedRequestId: RequestId | undefined,
    signal: Cancellation,
    onProgress?: (params: Record<string, unknown>) => void,
    upstream?: string,
  ): Promise<Record<string, unknown>>;
  /**
   * What the client behind a request declared it can answer (its capabilities: for a session those of its
   * initialize, for a 2026-07-28 request those of the attempt now waiting). A 2026-07-28 upstream is told
   * these with each request, as far as the gateway relays them, so that it asks only what will be answered.
   */
  capabilitiesFor?(relatedRequestId: RequestId | undefined): Record<string, unknown> | undefined;
  /**
   * The least severe log level the client behind a request wants messages of (a session's logging/setLevel,
   * a 2026-07-28 request's own `_meta`), or none. A 2026-07-28 upstream has no logging/setLevel: it is told
   * the level with each request, and sends no log messages for a request that names none.
   */
  logLevelFor?(relatedRequestId: RequestId | undefined): string | undefined;
  /**
   * A 2026-07-28 upstream's cache hints on its complete answer to a request (its `ttlMs`, `cacheScope`),
   * taken from the result before a 2025 client could see them: a modern client's answer must claim no
   * longer life and no wider scope than the upstream's.
   */
  cacheHint?(relatedRequestId: RequestId | undefined, ttlMs: unknown, cacheScope: unknown): void;
  /**
   * Of several of this caller's requests in flight on one connection that says nothing of which a message is
   * for (stdio), the one it is for, if the caller can tell; undefined when it cannot. A 2026-07-28 standing
   * answers each call on its own POST: a guess put one call's question in another call's round.
   */
  relatedOf?(candidates: readonly RequestId[]): RequestId | undefined;
  /** A server→client notification for this session only; `upstream`: the one that sent it, when one did (audit lines name it). */
  clientNotify(method: string, params: Record<string, unknown> | undefined, relatedRequestId?: RequestId, upstream?: string): void;
}

/** What an upstream said about itself in its initialize result. */
export interface UpstreamIdentity {
  protocolVersion: string;
  serverInfo: { name: string; version: string; [k: string]: unknown };
  capabilities: Record<string, any>;
  instructions?: string;
}

/**
 * The callers with requests in flight on one connection, each with the client request id a message that
 * names none is for: the caller's one request there; of several, the one the caller tells (relatedOf), else
 * its most recent (a 2025 session is asked on one of its own streams either way).
 */
export function activeCallersOf(inflight: Iterable<{ caller?: UpstreamCaller | undefined; callerRequestId?: RequestId | undefined }>): Map<UpstreamCaller, RequestId | undefined> {
  const ids = new Map<UpstreamCaller, RequestId[]>();
  for (const { caller, callerRequestId } of inflight) {
    if (!caller) continue;
    const list = ids.get(caller);
    if (!list) {
      ids.set(caller, [callerRequestId as RequestId]);
      continue;
    }
    // Each id once, the one seen last at the end (the most recent, as before relatedOf).
    const at = list.indexOf(callerRequestId as RequestId);
    if (at !== -1) list.splice(at, 1);
    list.push(callerRequestId as RequestId);
  }
  const out = new Map<UpstreamCaller, RequestId | undefined>();
  for (const [caller, list] of ids) out.set(caller, list.length === 1 || !caller.relatedOf ? list[list.length - 1] : caller.relatedOf(list));
  return out;
}
