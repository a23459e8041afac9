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
  /** search+working-set: the tools the session found ("<upstream>__<tool>", see ToolWorkingSet), still listed after a takeover. */
  workingSet?: string[];
  createdAt: number;
  /**
   * Epoch ms of the session's last use as its owner last wrote it: at most USED_AT_STEP of the idle timeout
   * behind (see usedAt), so a replica taking the session over can tell it idle past its timeout (idleExpired).
   * Absent from the records of releases before 2026-12-07: such a record is taken over as before.
   */
  usedAt?: number;
}

/** The record's usedAt is written again once the session's last use is this part of its idle timeout newer. */
export const USED_AT_STEP = 1 / 8;

/**
 * Whether a session's record says it was idle past its idle timeout: its usedAt older than the timeout, two
 * steps of it (the write's throttle, and the heartbeat that writes it running late) and two heartbeats (the
 * owner's last beat before it died). Such a session ended on its owner's clock, takeover or not.
 */
export function idleExpired(r: SessionRecord, idleTimeoutMs: number, heartbeatMs: number, now = Date.now()): boolean {
  if (typeof r.usedAt !== 'number') return false; // an earlier release's record: no last use to judge by
  return now - r.usedAt > idleTimeoutMs * (1 + 2 * USED_AT_STEP) + 2 * heartbeatMs;
}

/** When a session was last used: now while it is busy (a request in flight, an open stream: never idle), else its last touch. */
export function usedAt(s: { readonly inflight: number; readonly activity: { readonly last: number; readonly streams: number } }): number {
  return s.inflight > 0 || s.activity.streams > 0 ? Date.now() : s.activity.last;
}

export function principalOf(r: SessionRecord): Principal {
  return { ...r.principal, scopes: new Set() };
}

/** The parts of a 2025 session (ClientSession) its record is made of, besides what it keeps privately. */
export interface RecordedSession {
  readonly id: string;
  readonly kind: 'streamable-http' | 'sse';
  readonly endpoint: { readonly config: { readonly path: string }; readonly pools: ReadonlyArray<{ readonly movable: boolean }> };
  readonly principal: Principal;
  readonly protocolVersion: string | undefined;
  readonly clientCapabilities: Record<string, unknown>;
  readonly clientInfo: Record<string, unknown> | undefined;
  readonly activity: { readonly openedAt: number; readonly last: number; readonly streams: number };
  readonly inflight: number;
}

/** What another replica needs to take session `s` over. */
export function recordOf(s: RecordedSession, kept: Pick<SessionRecord, 'subscriptions' | 'logLevel' | 'workingSet'>): SessionRecord {
  return {
    id: s.id,
    kind: s.kind,
    endpoint: s.endpoint.config.path,
    principal: { issuer: s.principal.issuer, subject: s.principal.subject, tenant: s.principal.tenant },
    protocolVersion: s.protocolVersion ?? '2025-03-26',
    clientCapabilities: s.clientCapabilities,
    clientInfo: s.clientInfo,
    // A legacy session lives and dies with its one stream; a per-session upstream's state cannot move.
    movable: s.kind === 'streamable-http' && s.endpoint.pools.every((p) => p.movable),
    ...kept,
    // When it opened, not when this record was written: the admin API shows its age from it.
    createdAt: s.activity.openedAt,
    usedAt: usedAt(s),
  };
}
