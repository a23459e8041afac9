import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { UpstreamUser } from './upstream-user.js';
import { isDead, linkKey, type VaultEntry, type VaultStore } from './vault-store.js';

/** What a user's consent yields for one upstream: held only sealed, opened only to be sent there. */
export interface UserTokens {
  accessToken: string;
  refreshToken?: string | undefined;
  /** ms since the epoch. */
  expiresAt: number;
  /**
   * When it is refreshed (ms since the epoch): refreshSkewMs before expiresAt, never before half its life
   * (renewAt), written at issuance. A link stored before this field existed is refreshed at
   * expiresAt - refreshSkewMs.
   */
  renewAt?: number | undefined;
  scope?: string | undefined;
}

/** What an operator or the user may see of a link: never a token. */
export interface LinkInfo {
  issuer: string;
  subject: string;
  tenant: string;
  upstream: string;
  linkedAt: string;
  expiresAt: string;
  refreshable: boolean;
  /** expired: no refresh token and the access token expired; its next use asks for consent again (deleted after DEAD_LINK_RETENTION_MS). */
  state: 'active' | 'expired';
}

/**
 * A link as read: its tokens, when its consent was given, and which stored record they came from
 * (`version`, the record's sealed value: each seal has its own IV, so a later write never holds the same).
 * A write made from what was read (a refresh, the removal of a link that ran out) names it, and happens
 * only while that record is still the one stored.
 */
export interface StoredLink {
  tokens: UserTokens;
  linkedAt: number;
  version: string;
}

// v2 binds a link to what its upstream is (see vault-audience.ts); v1, written before, opens as before
// and is sealed again as v2 at its next use, bound to the upstream as configured then.
const VERSION = 'v2';
const VERSION_UNBOUND = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_BYTES = 4;

interface VaultKey {
  id: string;
  aes: Buffer;
}

// The key id is a hash of the key (never the key, nor bytes an attacker could use): it says which
// configured key sealed an entry, so opening needs no trial decryption.
function vaultKey(bytes: Buffer): VaultKey {
  if (bytes.length !== 32) throw new Error('a vault key is 32 bytes');
  const aes = Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), 'switchboard vault v1: aes-256-gcm', 32));
  const id = createHash('sha256').update('switchboard vault v1: key id').update(bytes).digest().subarray(0, KEY_ID_BYTES).toString('base64url');
  return { id, aes };
}

/** The associated data: an entry opens only as the user and upstream (and, v2, its audience) it was sealed for. */
function aad(user: UpstreamUser, upstream: string, audience?: string): Buffer {
  const bound = [user.issuer, user.subject, user.tenant, upstream];
  if (audience !== undefined) bound.push(audience);
  return Buffer.from(JSON.stringify(bound), 'utf8');
}

/**
 * Each user's upstream tokens, sealed at rest with AES-256-GCM (a random 12-byte IV per seal, the
 * principal and upstream as associated data). The current key seals; previous keys still open, and an
 * entry opened with one is sealed again with the current key (rotation completes as links are used).
 * Nothing here is enumerable: a stray log of the vault shows no key and no token.
 */
export class CredentialVault {
  readonly #current: VaultKey;
  readonly #keys = new Map<string, VaultKey>();
  readonly #store: VaultStore;
  readonly #audience: (upstream: string) => string | undefined;
  readonly #upstreams: () => readonly string[];
  readonly #logger: Logger | undefined;
  /** Key ids of links no configured key opens, each logged once (see #unknownKey). */
  readonly #unknownKeys = new Set<string>();

  /**
   * `audience`: what each upstream name stands for now (vaultAudience of its config, read live: reloads change it).
   * `upstreams`: the names of the upstreams configured now, whose link a user's listing looks up by name (VaultStore.listUser).
   * `logger`: hears of links sealed with a key this replica does not have.
   */
  constructor(key: Buffer, previous: readonly Buffer[], store: VaultStore, audience: (upstream: string) => string | undefined = () => '', upstreams: () => readonly string[] = () => [], logger?: Logger) {
    this.#current = vaultKey(key);
    for (const k of [this.#current, ...previous.map(vaultKey)]) if (!this.#keys.has(k.id)) this.#keys.set(k.id, k);
    this.#store = store;
    this.#audience = audience;
    this.#upstreams = upstreams;
    this.#logger = logger;
  }

  get store(): VaultStore {
    return this.#store;
  }

  seal(user: UpstreamUser, upstream: string, tokens: UserTokens): string {
    const audience = this.#audience(upstream);
    if (audience === undefined) throw new Error(`upstream "${upstream}" takes no user links`);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current.aes, iv);
    cipher.setAAD(aad(user, upstream, audience));
    const ct = Buffer.concat([cipher.update(JSON.stringify(tokens), 'utf8'), cipher.final()]);
    return [VERSION, this.#current.id, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /**
   * The tokens, or undefined when no configured key opens them (a key dropped, the entry moved, or its
   * upstream now another server). `stale`: to be sealed again (a previous key's, or a v1 entry).
   */
  open(user: UpstreamUser, upstream: string, sealed: string): { tokens: UserTokens; stale: boolean } | undefined {
    const [v, id, iv, ct, tag] = sealed.split('.');
    const key = id === undefined ? undefined : this.#keys.get(id);
    if (id !== undefined && !key) this.#unknownKey(id);
    const audience = v === VERSION ? this.#audience(upstream) : undefined;
    if ((v === VERSION ? audience === undefined : v !== VERSION_UNBOUND) || !key || iv === undefined || ct === undefined || tag === undefined) return undefined;
    try {
      // The tag's full 16 bytes, always: GCM accepts a tag cut to 4, which an entry forged in the store would be.
      const authTag = Buffer.from(tag, 'base64url');
      if (authTag.length !== TAG_BYTES) return undefined;
      const d = createDecipheriv('aes-256-gcm', key.aes, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      d.setAAD(aad(user, upstream, audience));
      d.setAuthTag(authTag);
      const plain = Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
      return { tokens: JSON.parse(plain) as UserTokens, stale: key !== this.#current || v !== VERSION };
    } catch {
      return undefined;
    }
  }

  /**
   * A link sealed with a key not configured here is treated as absent (its user is asked to consent again,
   * and that consent written over it): right after a previous key was dropped, but also on a replica given
   * a wrong vault.key, which then silently made every user consent again and overwrote the links the other
   * replicas open. Said once per key id (a hash of the key, never the key) so an operator can tell.
   */
  #unknownKey(id: string): void {
    if (this.#unknownKeys.has(id) || this.#unknownKeys.size >= 16) return;
    this.#unknownKeys.add(id);
    this.#logger?.warn({ keyId: id }, 'vault: a link is sealed with a key this replica does not have; no configured vault key opens it, so its user is asked to consent again: check that vault.key (and previousKeys) are the same on every replica');
  }

  /** The user's tokens for the upstream, or undefined (never linked, revoked, or unopenable). */
  async load(upstream: string, user: UpstreamUser): Promise<UserTokens | undefined> {
    return (await this.loadLink(upstream, user))?.tokens;
  }

  /** The same, with when the consent they came from was given (see linkedAt) and the record's version. */
  async loadLink(upstream: string, user: UpstreamUser): Promise<StoredLink | undefined> {
    const entry = await this.#store.get(upstream, user);
    const opened = entry && this.open(user, upstream, entry.sealed);
    if (!entry || !opened) return undefined;
    if (!opened.stale) return { tokens: opened.tokens, linkedAt: entry.linkedAt, version: entry.sealed };
    // Sealed again with the current key only over the entry read: a new consent, a refresh or a revocation
    // stored since is newer (a reseal of the old tokens would bring the old account back), and is read instead.
    const resealed = this.seal(user, upstream, opened.tokens);
    if (await this.#store.replaceIf({ ...entry, sealed: resealed }, entry.sealed)) return { tokens: opened.tokens, linkedAt: entry.linkedAt, version: resealed };
    const now = await this.#store.get(upstream, user);
    const reopened = now && this.open(user, upstream, now.sealed);
    return now && reopened ? { tokens: reopened.tokens, linkedAt: now.linkedAt, version: now.sealed } : undefined;
  }

  /**
   * When the user's link was made (their consent; a refresh keeps it, a new consent changes it), or
   * undefined when there is none: which consent a token handed out earlier came from is still in force.
   */
  async linkedAt(upstream: string, user: UpstreamUser): Promise<number | undefined> {
    return (await this.#store.get(upstream, user))?.linkedAt;
  }

  /** A new consent: the link is (re)made. Answers what was stored (its sealed value). */
  async save(upstream: string, user: UpstreamUser, tokens: UserTokens, linkedAt = Date.now()): Promise<string> {
    const u = { issuer: user.issuer, subject: user.subject, tenant: user.tenant };
    const sealed = this.seal(u, upstream, tokens);
    await this.#store.put({ user: u, upstream, linkedAt, expiresAt: tokens.expiresAt, refreshable: tokens.refreshToken !== undefined, sealed });
    return sealed;
  }

  /**
   * Stores tokens refreshed from `from` in its place, keeping its consent time; false (nothing written)
   * when the link is no longer the one read: a revocation, a new consent (perhaps as another account) or
   * another refresh stored meanwhile wins, and the old consent's tokens never overwrite it.
   */
  update(upstream: string, user: UpstreamUser, from: StoredLink, tokens: UserTokens): Promise<boolean> {
    const u = { issuer: user.issuer, subject: user.subject, tenant: user.tenant };
    const entry = { user: u, upstream, linkedAt: from.linkedAt, expiresAt: tokens.expiresAt, refreshable: tokens.refreshToken !== undefined, sealed: this.seal(u, upstream, tokens) };
    return this.#store.replaceIf(entry, from.version);
  }

  /**
   * Deletes the link, and voids the user's consents to the upstream still pending: a link given before (a
   * second -32042, one sent to someone else) or a sign-in under way at the authorization server completed
   * after the revocation linked the account again (see saveConsent). The mark comes first, so a consent
   * stored between the two is deleted here, or finds the mark there. Marked only for an upstream configured
   * (the only ones a consent can complete for): a user's DELETEs of made-up names leave nothing in the store.
   */
  async revoke(upstream: string, user: UpstreamUser): Promise<boolean> {
    if (this.#upstreams().includes(upstream)) await this.#store.markRevoked(upstream, user, Date.now(), REVOKED_MARK_MS);
    return this.#store.delete(upstream, user);
  }

  /** Whether the user's link to the upstream was revoked at or after `begunAt` (ms; a consent begun then is void). */
  async revokedSince(upstream: string, user: UpstreamUser, begunAt: number): Promise<boolean> {
    const at = await this.#store.revokedAt(upstream, user);
    return at !== undefined && at >= begunAt;
  }

  /**
   * Stores the tokens of a consent begun at `begunAt` (ms), unless the link was revoked since: false, nothing
   * kept. Checked again once stored: a revocation made meanwhile deletes what this wrote (only that).
   */
  async saveConsent(upstream: string, user: UpstreamUser, tokens: UserTokens, begunAt: number): Promise<boolean> {
    if (await this.revokedSince(upstream, user, begunAt)) return false;
    const sealed = await this.save(upstream, user, tokens);
    if (!(await this.revokedSince(upstream, user, begunAt))) return true;
    await this.#store.deleteIf(upstream, user, sealed);
    return false;
  }

  /** Deletes the link only while it is still the one read (a link that ran out): a consent given since is kept. */
  discard(upstream: string, user: UpstreamUser, link: StoredLink): Promise<boolean> {
    return this.#store.deleteIf(upstream, user, link.version);
  }

  /**
   * Deletes the link only while it still holds `refreshToken` (the one the authorization server just
   * refused): a token another replica's refresh stored meanwhile is kept. False when nothing was deleted.
   */
  async revokeIf(upstream: string, user: UpstreamUser, refreshToken: string): Promise<boolean> {
    const entry = await this.#store.get(upstream, user);
    if (!entry || this.open(user, upstream, entry.sealed)?.tokens.refreshToken !== refreshToken) return false;
    return this.#store.deleteIf(upstream, user, entry.sealed);
  }

  /** Links as metadata, optionally only those matching the filter; a filter naming one user reads only theirs. */
  async links(filter: { issuer?: string | undefined; subject?: string | undefined; tenant?: string | undefined; upstream?: string | undefined } = {}): Promise<LinkInfo[]> {
    const { issuer, subject, tenant } = filter;
    const entries = issuer !== undefined && subject !== undefined && tenant !== undefined ? await this.#store.listUser({ issuer, subject, tenant }, this.#upstreams()) : await this.#store.list();
    return entries
      .filter((e) => matches(e, filter))
      .map(info)
      .sort((a, b) => a.upstream.localeCompare(b.upstream) || a.subject.localeCompare(b.subject));
  }

  /**
   * The first `n` links matching `filter` after the key `after` (linkKey, in the order of its UTF-8
   * bytes), read from the store in that order, `n` and then `LINKS_CHUNK` at a time: a page reads a page's worth
   * (more when a filter passes few of them over; an upstream filter starts and ends in its own range).
   */
  async linksAfter(filter: { issuer?: string | undefined; subject?: string | undefined; tenant?: string | undefined; upstream?: string | undefined }, after: string | undefined, n: number): Promise<LinkInfo[]> {
    // Every key of an upstream's links starts with "<upstream>\n" and sorts after it (upstream names have no newline).
    const floor = filter.upstream === undefined ? undefined : `${filter.upstream}\n`;
    let from = floor !== undefined && (after === undefined || Buffer.compare(Buffer.from(after), Buffer.from(floor)) < 0) ? floor : after;
    const out: LinkInfo[] = [];
    // A page's worth first (all of it, when no filter passes any over), then larger reads.
    for (let count = n; ; count = Math.max(n, LINKS_CHUNK)) {
      const { entries, last } = await this.#store.listAfter(from, count);
      for (const e of entries) {
        if (floor !== undefined && !linkKey(e.upstream, e.user).startsWith(floor)) return out;
        if (matches(e, filter)) out.push(info(e));
        if (out.length === n) return out;
      }
      if (last === undefined) return out;
      from = last;
    }
  }

  toJSON(): Record<string, string> {
    return { vault: 'sealed' };
  }
}

/**
 * How long a revocation voids consents begun before it: a flow and the state after it live vault.flowTtlMs
 * each, at most an hour (vault-schema), so none begun before outlives this.
 */
const REVOKED_MARK_MS = 2 * 3_600_000;

/** Links read from the store at once by linksAfter (a page of the admin API holds at most 1000). */
const LINKS_CHUNK = 500;

function matches(e: VaultEntry, filter: { issuer?: string | undefined; subject?: string | undefined; tenant?: string | undefined; upstream?: string | undefined }): boolean {
  return (filter.issuer === undefined || e.user.issuer === filter.issuer) && (filter.subject === undefined || e.user.subject === filter.subject) && (filter.tenant === undefined || e.user.tenant === filter.tenant) && (filter.upstream === undefined || e.upstream === filter.upstream);
}

function info(e: VaultEntry): LinkInfo {
  return {
    issuer: e.user.issuer,
    subject: e.user.subject,
    tenant: e.user.tenant,
    upstream: e.upstream,
    linkedAt: new Date(e.linkedAt).toISOString(),
    expiresAt: new Date(e.expiresAt).toISOString(),
    refreshable: e.refreshable,
    state: isDead(e, Date.now()) ? 'expired' : 'active',
  };
}
