import type { UpstreamUser } from './upstream-user.js';
import { userKey } from './upstream-user.js';

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
  list(): Promise<VaultEntry[]>;
  /** A record readable once, until ttlMs (consent flows and OAuth states). */
  putOnce(kind: 'flow' | 'state', id: string, value: string, ttlMs: number): Promise<void>;
  /** Reads and removes it in one step: a second take gets nothing (replay). */
  takeOnce(kind: 'flow' | 'state', id: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export function linkKey(upstream: string, user: UpstreamUser): string {
  return `${upstream}\n${userKey(user)}`;
}

/** Most single-use records kept at once in memory: a flood of consent links cannot grow it without bound. */
const MAX_ONCE = 100_000;

export class MemoryVaultStore implements VaultStore {
  readonly #links = new Map<string, VaultEntry>();
  readonly #once = new Map<string, { value: string; expiresAt: number }>();

  async get(upstream: string, user: UpstreamUser): Promise<VaultEntry | undefined> {
    return this.#links.get(linkKey(upstream, user));
  }

  async put(entry: VaultEntry): Promise<void> {
    this.#links.set(linkKey(entry.upstream, entry.user), entry);
  }

  async replaceIf(entry: VaultEntry, expected: string): Promise<boolean> {
    const k = linkKey(entry.upstream, entry.user);
    if (this.#links.get(k)?.sealed !== expected) return false;
    this.#links.set(k, entry);
    return true;
  }

  async delete(upstream: string, user: UpstreamUser): Promise<boolean> {
    return this.#links.delete(linkKey(upstream, user));
  }

  async deleteIf(upstream: string, user: UpstreamUser, sealed: string): Promise<boolean> {
    const k = linkKey(upstream, user);
    return this.#links.get(k)?.sealed === sealed && this.#links.delete(k);
  }

  async list(): Promise<VaultEntry[]> {
    return [...this.#links.values()];
  }

  async putOnce(kind: string, id: string, value: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    if (this.#once.size >= MAX_ONCE) for (const [k, r] of this.#once) if (r.expiresAt <= now) this.#once.delete(k);
    if (this.#once.size >= MAX_ONCE) this.#once.delete(this.#once.keys().next().value!);
    this.#once.set(`${kind}:${id}`, { value, expiresAt: now + ttlMs });
  }

  async takeOnce(kind: string, id: string): Promise<string | undefined> {
    const k = `${kind}:${id}`;
    const r = this.#once.get(k);
    this.#once.delete(k);
    return r && r.expiresAt > Date.now() ? r.value : undefined;
  }

  async close(): Promise<void> {}

  toJSON(): Record<string, number> {
    return { links: this.#links.size };
  }
}
