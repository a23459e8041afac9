import type { UpstreamUser } from './upstream-user.js';
import { userKey } from './upstream-user.js';
import { randomUUID } from 'node:crypto';
import { PendingRecords } from './pending-records.js';

/**
 * One user's link to one upstream as stored: who and which upstream in the clear (operators list
 * links by them), the tokens only sealed. `sealed` opens with the vault key and this entry's user and
 * upstream as associated data, so an entry copied under another user or upstream does not open.
 */
export interface VaultEntry {
  user: UpstreamUser;
  upstream: string;
  /** When the user consented (ms since the epoch). */
  linkedAt: number;
  /** When the access token expires (ms); a refresh token may outlive it. */
  expiresAt: number;
  /** Whether a refresh token is held. */
  refreshable: boolean;
  sealed: string;
}

/**
 * Where sealed links and the short-lived single-use records of a consent flow live: memory (one
 * replica) or Redis (replicas share them, and they survive a restart of either side).
 */
export interface VaultStore {
  get(upstream: string, user: UpstreamUser): Promise<VaultEntry | undefined>;
  put(entry: VaultEntry): Promise<void>;
  /**
   * Writes the entry only while the link still holds `expected` (the sealed value the entry was made
   * from; each seal has its own IV, so no two writes hold the same), in one step: a revocation, a new
   * consent or another refresh written since that read wins, and false is answered.
   */
  replaceIf(entry: VaultEntry, expected: string): Promise<boolean>;
  delete(upstream: string, user: UpstreamUser): Promise<boolean>;
  /** Deletes the link only while it still holds `sealed`, in one step: a refresh written meanwhile wins. */
  deleteIf(upstream: string, user: UpstreamUser, sealed: string): Promise<boolean>;
  /** Every link (operators' listings). */
  list(): Promise<VaultEntry[]>;
  /**
   * One user's links, read without reading any other user's. `upstreams`: the names whose link is looked
   * for even where an index does not list it (Redis: an earlier release's replica wrote it to the hash alone).
   */
  listUser(user: UpstreamUser, upstreams?: readonly string[]): Promise<VaultEntry[]>;
  /**
   * Links after the key `after` (linkKey; undefined: from the first) in the order of the keys' UTF-8
   * bytes, at least `count` while that many remain (Redis reads that many; memory answers all the rest),
   * and `last`, the last key read (undefined: none left): the admin API's pages (CredentialVault.linksAfter).
   */
  listAfter(after: string | undefined, count: number): Promise<{ entries: VaultEntry[]; last: string | undefined }>;
  /**
   * Deletes each link that holds no refresh token and whose access token expired before `expiredBefore`
   * (ms): dead, the next use asks for consent again (DeadLinks); and, given `configured` (the user-oauth
   * upstreams configured now), each link to another upstream whose access token expired before then,
   * refresh token or not: nothing uses it (isSwept). Each one is checked and deleted in one step,
   * so a consent given meanwhile is kept. Answers how many went, or undefined when another replica swept
   * within `onceInMs` (Redis: one replica sweeps for all).
   */
  sweepDead(expiredBefore: number, onceInMs: number, configured?: ReadonlySet<string>): Promise<number | undefined>;
  /**
   * A record readable once, until ttlMs (consent flows and OAuth states), of the principal `owner`
   * (userKey). Each principal has at most PENDING_PER_USER pending (beyond it, SWB_RATE_LIMITED): in
   * memory PendingRecords counts them, in Redis a set of each principal's (RedisVaultStore).
   */
  putOnce(kind: 'flow' | 'state', id: string, value: string, ttlMs: number, owner: string): Promise<void>;
  /** Reads and removes it in one step: a second take gets nothing (replay). */
  takeOnce(kind: 'flow' | 'state', id: string): Promise<string | undefined>;
  /** Reads it and leaves it in place (a consent link's confirmation page). */
  peekOnce(kind: 'flow' | 'state', id: string): Promise<string | undefined>;
  /**
   * Claims the refresh of a link for ttlMs: one replica (one credential) at a time sends its refresh token,
   * since a rotating server refuses the second. Answers the claim (give it back with releaseRefresh), or
   * undefined while another holds one.
   */
  claimRefresh(upstream: string, user: UpstreamUser, ttlMs: number): Promise<string | undefined>;
  /** Gives a claim back, only while it is still that one (one expired and claimed again is left). */
  releaseRefresh(upstream: string, user: UpstreamUser, claim: string): Promise<void>;
  /** Records that the user's link to the upstream was revoked at `at` (ms), kept for ttlMs (see CredentialVault.revoke). */
  markRevoked(upstream: string, user: UpstreamUser, at: number, ttlMs: number): Promise<void>;
  /** When the user's link to the upstream was last revoked, while that mark is kept; undefined when not. */
  revokedAt(upstream: string, user: UpstreamUser): Promise<number | undefined>;
  close(): Promise<void>;
}

/** No refresh token, and the access token expired before `at` (ms): the link can no longer be used. */
export function isDead(e: Pick<VaultEntry, 'refreshable' | 'expiresAt'>, at: number): boolean {
  return !e.refreshable && e.expiresAt < at;
}

/**
 * What a sweep deletes (VaultStore.sweepDead): a dead link (isDead) whose access token expired before `at`,
 * or a link to an upstream not in `configured` (removed by a reload: its refresh token is never used
 * again, and was kept sealed for ever) whose access token expired before `at`, refresh token or not.
 */
export function isSwept(e: Pick<VaultEntry, 'refreshable' | 'expiresAt' | 'upstream'>, at: number, configured: ReadonlySet<string> | undefined): boolean {
  return isDead(e, at) || (configured !== undefined && !configured.has(e.upstream) && e.expiresAt < at);
}

export function linkKey(upstream: string, user: UpstreamUser): string {
  return `${upstream}\n${userKey(user)}`;
}

/** Revocation marks a memory store keeps at most (as many as the pending records it holds). */
const MAX_REVOKED_MARKS = 100_000;

export class MemoryVaultStore implements VaultStore {
  /** Links by user, then upstream: a user's own links are found without going through anyone else's. */
  readonly #links = new Map<string, Map<string, VaultEntry>>();
  readonly #once: PendingRecords;
  /** Refresh claims by linkKey (see claimRefresh). */
  readonly #claims = new Map<string, { claim: string; until: number }>();
  /** Revocations of the last while (markRevoked), oldest first. */
  readonly #revoked = new Map<string, { at: number; until: number }>();

  /** maxOnce, pendingPerUser: the bounds of the consent records (PendingRecords), smaller in tests. */
  constructor(o: { maxOnce?: number; pendingPerUser?: number } = {}) {
    this.#once = new PendingRecords({ max: o.maxOnce, perUser: o.pendingPerUser });
  }

  async get(upstream: string, user: UpstreamUser): Promise<VaultEntry | undefined> {
    return this.#links.get(userKey(user))?.get(upstream);
  }

  async put(entry: VaultEntry): Promise<void> {
    const k = userKey(entry.user);
    let mine = this.#links.get(k);
    if (!mine) this.#links.set(k, (mine = new Map()));
    mine.set(entry.upstream, entry);
  }

  async replaceIf(entry: VaultEntry, expected: string): Promise<boolean> {
    const mine = this.#links.get(userKey(entry.user));
    if (mine?.get(entry.upstream)?.sealed !== expected) return false;
    mine.set(entry.upstream, entry);
    return true;
  }

  async delete(upstream: string, user: UpstreamUser): Promise<boolean> {
    const k = userKey(user);
    const mine = this.#links.get(k);
    if (!mine?.delete(upstream)) return false;
    if (mine.size === 0) this.#links.delete(k);
    return true;
  }

  async deleteIf(upstream: string, user: UpstreamUser, sealed: string): Promise<boolean> {
    // Read and deleted in one step (no await between): a write cannot come in between.
    if (this.#links.get(userKey(user))?.get(upstream)?.sealed !== sealed) return false;
    return this.delete(upstream, user);
  }

  async list(): Promise<VaultEntry[]> {
    return [...this.#links.values()].flatMap((mine) => [...mine.values()]);
  }

  async listUser(user: UpstreamUser): Promise<VaultEntry[]> {
    return [...(this.#links.get(userKey(user))?.values() ?? [])];
  }

  async sweepDead(expiredBefore: number, _onceInMs?: number, configured?: ReadonlySet<string>): Promise<number> {
    let n = 0;
    for (const e of await this.list()) if (isSwept(e, expiredBefore, configured) && (await this.deleteIf(e.upstream, e.user, e.sealed))) n++;
    return n;
  }

  async listAfter(after: string | undefined): Promise<{ entries: VaultEntry[]; last: string | undefined }> {
    const keyed = (await this.list()).map((e) => ({ key: Buffer.from(linkKey(e.upstream, e.user), 'utf8'), e }));
    const from = after === undefined ? undefined : Buffer.from(after, 'utf8');
    const left = (from ? keyed.filter((k) => Buffer.compare(k.key, from) > 0) : keyed).sort((x, y) => Buffer.compare(x.key, y.key));
    return { entries: left.map((k) => k.e), last: left.at(-1)?.key.toString('utf8') };
  }

  async putOnce(kind: string, id: string, value: string, ttlMs: number, owner: string): Promise<void> {
    this.#once.put(`${kind}:${id}`, value, ttlMs, owner);
  }

  async takeOnce(kind: string, id: string): Promise<string | undefined> {
    return this.#once.take(`${kind}:${id}`);
  }

  async peekOnce(kind: string, id: string): Promise<string | undefined> {
    return this.#once.peek(`${kind}:${id}`);
  }

  async claimRefresh(upstream: string, user: UpstreamUser, ttlMs: number): Promise<string | undefined> {
    const key = linkKey(upstream, user);
    if ((this.#claims.get(key)?.until ?? 0) > Date.now()) return undefined;
    const claim = randomUUID();
    this.#claims.set(key, { claim, until: Date.now() + ttlMs });
    return claim;
  }

  async releaseRefresh(upstream: string, user: UpstreamUser, claim: string): Promise<void> {
    const key = linkKey(upstream, user);
    if (this.#claims.get(key)?.claim === claim) this.#claims.delete(key);
  }

  async markRevoked(upstream: string, user: UpstreamUser, at: number, ttlMs: number): Promise<void> {
    const key = linkKey(upstream, user);
    this.#revoked.delete(key);
    // Bounded: the oldest mark goes first (one a consent begun before it can no longer outlive).
    if (this.#revoked.size >= MAX_REVOKED_MARKS) this.#revoked.delete(this.#revoked.keys().next().value!);
    this.#revoked.set(key, { at, until: Date.now() + ttlMs });
  }

  async revokedAt(upstream: string, user: UpstreamUser): Promise<number | undefined> {
    const mark = this.#revoked.get(linkKey(upstream, user));
    return mark && mark.until > Date.now() ? mark.at : undefined;
  }

  async close(): Promise<void> {}

  toJSON(): Record<string, number> {
    let links = 0;
    for (const mine of this.#links.values()) links += mine.size;
    return { links, pending: this.#once.size };
  }
}
