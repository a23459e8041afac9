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
   * A server→client request (sampling/createMessage, elicitation/create, roots/list). `onProgress`: told
   * each notifications/progress the client reports on it, under the upstream's own token (when it gave one).
   */
  clientRequest(
    method: string,
    params: Record<string, unknown> | undefined,
    relatedRequestId: RequestId | undefined,
    signal: Cancellation,
    onProgress?: (params: Record<string, unknown>) => void,
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
  /** A server→client notification for this session only. */
  clientNotify(method: string, params: Record<string, unknown> | undefined, relatedRequestId?: RequestId): void;
}

/** What an upstream said about itself in its initialize result. */
export interface UpstreamIdentity {
  protocolVersion: string;
  serverInfo: { name: string; version: string; [k: string]: unknown };
  capabilities: Record<string, any>;
  instructions?: string;
}
