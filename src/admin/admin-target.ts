/**
 * What the admin API reads and does, as plain data: the composition root (src/admin-target.ts)
 * implements it over the gateway, so this folder depends on no part of the request path.
 */
import type { PageRequest } from './paging.js';

export interface SessionRow {
  id: string;
  /** The replica holding the session (its upstream connections); null: released by a replica that shut down, taken over by the next request's replica. */
  replica: string | null;
  /** Whether that replica is alive (its heartbeat is current). Always true for sessions held by the replica answering. */
  replicaAlive: boolean;
  era: 'legacy' | 'modern';
  transport: 'streamable-http' | 'sse' | 'modern';
  protocolVersion: string | null;
  issuer: string;
  subject: string;
  tenant: string;
  endpoint: string;
  ageSeconds: number;
  /**
   * When it opened (ISO time): unlike the age, the same at every look, so the console's view of the
   * sessions changes only when they do (absent in the rows of a replica on an older release).
   */
  openedAt?: string;
  /** Requests in flight; null for a session held by another replica (only its holder knows). */
  inflight: number | null;
}

/** A session in the store as the cluster reads it: its record, its owner ('' when released), whether the owner is alive. */
export interface StoredSession {
  record: { id: string; kind: 'streamable-http' | 'sse'; protocolVersion: string; principal: { issuer: string; subject: string; tenant: string }; endpoint: string; createdAt: number };
  owner: string;
  alive: boolean;
}

/** A session another replica holds (or none: released), as its record tells it: what only the holder knows is null. */
export function storedSessionRow({ record: r, owner, alive }: StoredSession, now: number): SessionRow {
  return {
    id: r.id,
    replica: owner || null,
    replicaAlive: owner !== '' && alive,
    era: 'legacy',
    transport: r.kind,
    protocolVersion: r.protocolVersion,
    issuer: r.principal.issuer,
    subject: r.principal.subject,
    tenant: r.principal.tenant,
    endpoint: r.endpoint,
    ageSeconds: Math.max(0, (now - r.createdAt) / 1000),
    openedAt: new Date(r.createdAt).toISOString(),
    inflight: null,
  };
}

/** A pin table as the pin store reads it: upstream → tool → approved hash and pending change. */
type PinTableView = Record<string, Record<string, { approved?: string; pending?: { hash: string; summary: string; firstSeen: string; rejected?: boolean; findings?: PinChangeRow['findings'] } }>>;

/** The table's pending changes as rows, their definitions and diff not filled in yet. */
export function pendingRows(table: PinTableView): PinChangeRow[] {
  const rows: PinChangeRow[] = [];
  for (const [upstream, tools] of Object.entries(table)) {
    for (const [tool, e] of Object.entries(tools)) {
      if (!e.pending) continue;
      rows.push({ upstream, tool, approvedHash: e.approved ?? null, pendingHash: e.pending.hash, summary: e.pending.summary, firstSeen: e.pending.firstSeen, rejected: e.pending.rejected === true, old: null, new: null, diff: [], findings: e.pending.findings ?? [] });
    }
  }
  return rows;
}

/** Who ended a session: `endedBy` is the replica that closed it (its holder), or the one answering when it removed a dead holder's record. */
export interface EndedSession {
  id: string;
  endedBy: string;
  holder: string | null;
}

export interface InstanceRow {
  pid: number | null;
  state: string;
  circuit: string;
  inflight: number;
  backoffAttempt: number;
  lastError: string | null;
}

export interface UpstreamRow {
  /** The replica whose instances these are (each replica runs its own). */
  replica: string;
  name: string;
  transport: string;
  sharing: string;
  ready: boolean;
  /**
   * A pool a reload replaced or removed (or a restart replaced), finishing its calls: no new call reaches
   * it, its processes stop once its calls end (admin.drainGraceMs). Listed beside the pool in force.
   */
  draining: boolean;
  restarts: number;
  /** Sessions waiting for an instance (per-session pools). */
  queued: number;
  inflight: number;
  endpoints: string[];
  instances: InstanceRow[];
}

export interface PinChangeRow {
  upstream: string;
  tool: string;
  /** The approved hash, or null for a tool new since the upstream was pinned. */
  approvedHash: string | null;
  pendingHash: string;
  summary: string;
  firstSeen: string;
  /** An operator rejected this pending definition: it stays withheld and out of the approval queue. */
  rejected: boolean;
  /** The definitions as this replica saw them (null when it did not see that version). */
  old: Record<string, unknown> | null;
  new: Record<string, unknown> | null;
  /** A line diff of the two definitions (JSON, two-space indented): "  ", "- " and "+ " lines. */
  diff: string[];
  /** Hidden text in the pending definition (kind, field, count; never the text); empty: none found. */
  findings: Array<{ kind: string; path: string; count: number }>;
}

export interface TenantRow {
  name: string;
  endpoints: string[];
  limits: Record<string, unknown>;
  /** Across the cluster (every replica that answered). */
  usage: { sessions: number; inflight: number };
  /** The same per replica. */
  byReplica: Record<string, { sessions: number; inflight: number }>;
}

/** An approval's outcome per tool. */
export interface PinDecision {
  tool: string;
  outcome: 'approved' | 'rejected' | 'not-pending' | 'pinned-in-config';
}

/** A user's link to a user-oauth upstream: metadata only, never a token. */
export interface LinkRow {
  issuer: string;
  subject: string;
  tenant: string;
  upstream: string;
  linkedAt: string;
  expiresAt: string;
  refreshable: boolean;
  /** expired: no refresh token and the access token expired (its next use asks for consent again). */
  state: 'active' | 'expired';
}

export interface LinkFilter {
  issuer?: string | undefined;
  subject?: string | undefined;
  tenant?: string | undefined;
  upstream?: string | undefined;
}

export interface AdminCredentials {
  /** The static token, if one is configured (read from tokenFile at each request). */
  token: string | undefined;
  scope: string;
  /**
   * Verifies a JWT as the gateway's edge does and returns its scopes; undefined when auth.mode is none. Rejects
   * with an error whose `status` is 503 when the token cannot be checked now (the issuer's key set unreachable).
   */
  verifyJwt: ((bearer: string) => Promise<ReadonlySet<string>>) | undefined;
  /**
   * Moves whenever what a JWT is checked against may have changed (a reload: keys, issuer, audience), so
   * that open console streams are checked again at once, not at their next minute; absent: it never moves.
   */
  generation?: number;
}

export interface AdminTarget {
  readonly replica: string;
  credentials(): AdminCredentials;
  /**
   * Every session, or with `page` at least the first `limit` + 1 after its start in key order (fewer
   * to read: each replica and the store give only theirs; see paging.ts). The same for pins and links.
   */
  sessions(page?: PageRequest): Promise<SessionRow[]>;
  /**
   * undefined: no such session (on this replica, or, with Redis, in the cluster). Rejects with a 504
   * `replica_timeout` when the replica that holds it, or one that may, took the request and did not answer;
   * with a 502 `replica_error` when one that may hold a 2026-07-28 standing answered with an error.
   */
  endSession(id: string): Promise<EndedSession | undefined>;
  /** Every replica's upstreams (with Redis: the others are asked; one that does not answer is left out and logged). */
  upstreams(): Promise<UpstreamRow[]>;
  /** undefined: no such upstream. */
  restartUpstream(name: string): Promise<Record<string, unknown> | undefined>;
  /** undefined: pinning is off for every upstream. */
  pins(page?: PageRequest): Promise<PinChangeRow[] | undefined>;
  approvePins(upstream: string, tools: ReadonlyArray<{ tool: string; hash: string }>): Promise<PinDecision[] | undefined>;
  /** Marks pending changes rejected (by the hash reviewed); undefined: no such pinned upstream. */
  rejectPins(upstream: string, tools: ReadonlyArray<{ tool: string; hash: string }>): Promise<PinDecision[] | undefined>;
  tenants(): Promise<TenantRow[]>;
  /** Users' links to user-oauth upstreams; undefined: no vault configured. */
  links(filter: LinkFilter, page?: PageRequest): Promise<LinkRow[] | undefined>;
  /** Revokes every link matching the filter (subject and upstream required); undefined: no vault configured. */
  revokeLinks(filter: LinkFilter & { subject: string; upstream: string }): Promise<LinkRow[] | undefined>;
  /** The config in force, secrets redacted. */
  config(): unknown;
  /** Reloads this replica's file and, with Redis, has every other replica reload its own (`replicas`: each one's report). */
  reload(): Promise<Record<string, unknown>>;
  /** Every audit line from now on (the console's live tail); returns the way to stop, or undefined when the audit log is off. */
  tailAudit(listener: (line: Readonly<Record<string, unknown>>) => void): (() => void) | undefined;
}

/**
 * A 2026-07-28 standing (no record in the store: every replica is asked) that no replica that answered
 * holds, while some took the question and did not answer in time (frozen, overloaded): one of them may
 * hold it, so "no session" would send the operator away from a standing that is still there. Answered
 * 504 `replica_timeout`, as a 2025 session whose holder did not answer; the question waits in the silent
 * replica's connection, so one that holds the standing ends it once it runs again.
 */
export class UnansweredReplicas extends Error {
  readonly status = 504;
  readonly code = 'replica_timeout';
  readonly unanswered: number;

  constructor(id: string, unanswered: number) {
    const replicas = unanswered === 1 ? '1 replica did not answer' : `${unanswered} replicas did not answer`;
    super(
      `no replica that answered holds "${id}", and ${replicas} in time (store.redis.forwardTimeoutMs; frozen or overloaded?): one of them may hold it, so it is not known to be ended; ` +
        'one that holds it has the request and ends it when it runs again; see GET /sessions, and retry (once its heartbeat lapses, store.redis.replicaTtlMs, it is no longer asked)',
    );
    this.name = 'UnansweredReplicas';
    this.unanswered = unanswered;
  }
}

/** Every other replica's answer to a question to all, or its error, and how many took it and did not answer in time. */
export interface ReplicaAnswers {
  answers: ReadonlyMap<string, { value?: unknown; error?: string }>;
  unanswered: number;
}

/**
 * A 2026-07-28 standing (no record in the store: every replica is asked) that no replica that answered
 * ended, while some answered with an error (a replica on a release that knows no end-modern question,
 * one whose end of it failed): one of them may hold it, so "no session" would send the operator away
 * from a standing that may still be there. Answered 502 `replica_error`, naming them and what they said.
 */
export class ReplicaErrors extends Error {
  readonly status = 502;
  readonly code = 'replica_error';
  readonly replicas: string[];

  constructor(id: string, failed: ReadonlyMap<string, string>, unanswered: number) {
    const named = [...failed].slice(0, 5).map(([replica, error]) => `${replica} ("${error.slice(0, 200)}")`);
    const more = failed.size > named.length ? ` and ${failed.size - named.length} more` : '';
    const silent = unanswered > 0 ? `, and ${unanswered} did not answer in time` : '';
    super(
      `no replica that answered holds "${id}", and ${failed.size === 1 ? 'replica' : 'replicas'} ${named.join(', ')}${more} answered with an error${silent}: ` +
        'one of them may hold it, so it is not known to be ended; see their log and GET /sessions, and retry, or end it on the admin API of the replica that lists it (one on a release that knows no end-modern question ends it only there)',
    );
    this.name = 'ReplicaErrors';
    this.replicas = [...failed.keys()];
  }
}

/**
 * How every other replica's answer to end-modern ends a 2026-07-28 standing: the one that held it ended
 * it; else, when one may hold it and did not say (an error, no answer in time), it is not known to be
 * ended (502, 504); else no replica holds it (undefined: 404).
 */
export function modernEnded(id: string, asked: ReplicaAnswers): EndedSession | undefined {
  const failed = new Map<string, string>();
  for (const [replica, a] of asked.answers) {
    if (a.error !== undefined) failed.set(replica, a.error);
    else if (a.value === true) return { id, endedBy: replica, holder: replica };
  }
  if (failed.size > 0) throw new ReplicaErrors(id, failed, asked.unanswered);
  if (asked.unanswered > 0) throw new UnansweredReplicas(id, asked.unanswered);
  return undefined;
}
