import type { Principal } from '../auth/principal.js';

/** What survives a replica: enough to rebuild a session on another one. */
export interface SessionRecord {
  id: string;
  kind: 'streamable-http' | 'sse';
  endpoint: string;
  principal: { issuer: string; subject: string; tenant: string };
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown> | undefined;
  /** A session with per-session upstreams cannot move: their state died with the owner. */
  movable: boolean;
  /** Resource subscriptions and log level, renewed upstream by a replica that takes the session over. */
  subscriptions?: string[];
  logLevel?: string | undefined;
  /** search+working-set: the tools the session found, still listed after a takeover. */
  workingSet?: string[];
  createdAt: number;
}

export function principalOf(r: SessionRecord): Principal {
  return { ...r.principal, scopes: new Set() };
}
