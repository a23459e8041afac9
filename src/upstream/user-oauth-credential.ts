import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '../errors.js';
import type { BearerSource } from './bearer-source.js';
import type { CredentialVault, StoredLink, UserTokens } from './credential-vault.js';
import { GrantRefused, type UserOAuthClient } from './user-oauth-client.js';
import type { UpstreamUser } from './upstream-user.js';

/**
 * How long a refresh token the authorization server refused waits for a concurrent refresh's token to
 * reach the vault (a rotating server refuses the loser at once, and the winner's answer may take a
 * while), and how often it looks. Only a grant that really ended pays the wait.
 */
const SUCCESSOR_WAIT_MS = 2000;
const SUCCESSOR_POLL_MS = 50;
/**
 * After a refresh that failed for the moment (not invalid_grant) while the stored token is still valid: how
 * long that token is used before the next refresh is tried (as RenewedToken waits). Each call used to send
 * its own and wait for its answer, up to the authorization server's timeouts when it is down.
 */
const REFRESH_RETRY_MS = 5000;
/**
 * How long one credential's claim on a link's refresh holds (VaultStore.claimRefresh), and how long the
 * others wait for its token: a holder gone, or slower than that, no longer keeps them from refreshing.
 */
const REFRESH_CLAIM_MS = 30_000;

/** A token handed out, and when the consent it came from was given (CredentialVault.linkedAt). */
export interface ConsentedToken {
  token: string;
  linkedAt: number;
}

/** Why consent is asked (again): never linked or revoked, or the grant ended at the authorization server. */
export type ConsentReason = 'not-linked' | 'expired';

export interface ConsentAsker {
  /** The error that asks the user to consent: a -32042 with a fresh /oauth/start URL. */
  required(user: UpstreamUser, upstream: string, reason: ConsentReason): Promise<GatewayError>;
  /** The authorization server refused the gateway's own client or request (not the user's grant): logged for an operator, and the error to answer. */
  clientRefused(user: UpstreamUser, upstream: string, refusal: GrantRefused): GatewayError;
}

/**
 * One user's token for one user-oauth upstream, read from the vault at each use (the vault is the
 * truth: a revocation on any replica takes effect at the next request). Refreshed refreshSkewMs before
 * it expires but never before half its life (UserTokens.renewAt), or at once after the upstream refused it (401); a refresh the authorization server
 * refuses with invalid_grant (the user revoked the grant there) removes the link and asks for consent
 * again, unless another replica's refresh of the same token stored a new one meanwhile (a rotating server
 * refuses the loser of that race), which is then used. Any other failure keeps the link: the grant is not
 * what failed.
 * Concurrent callers share one read-and-refresh.
 */
export class UserOAuthCredential implements BearerSource {
  readonly #client: UserOAuthClient;
  readonly #user: UpstreamUser;
  readonly #vault: CredentialVault;
  readonly #consent: ConsentAsker;
  /** The token the upstream refused (401): refreshed before it is used again; any other stored token is not. */
  #refused: string | undefined;
  #inflight: Promise<ConsentedToken> | undefined;
  /** A refresh of this refresh token failed for the moment: not tried again before `at` while its access token is valid. */
  #retry: { refreshToken: string; at: number } | undefined;

  constructor(client: UserOAuthClient, user: UpstreamUser, vault: CredentialVault, consent: ConsentAsker) {
    this.#client = client;
    this.#user = user;
    this.#vault = vault;
    this.#consent = consent;
  }

  async token(): Promise<string> {
    return (await this.grant()).token;
  }

  /** The token, with the time of the consent it came from: a new consent changes it, a refresh does not. */
  grant(): Promise<ConsentedToken> {
    this.#inflight ??= this.#current().finally(() => (this.#inflight = undefined));
    return this.#inflight;
  }

  invalidate(refused: string): void {
    // The token itself, not "whatever is stored next": another replica refused the same one may already
    // have refreshed it, and its fresh token refreshed again would rotate for nothing (and race).
    this.#refused = refused;
  }

  async #current(): Promise<ConsentedToken> {
    const upstream = this.#client.upstream;
    // Bounded: each turn means the link changed between its read and a write made from it (a new consent,
    // a revocation, another replica's refresh), which the next read shows.
    for (let turn = 0; turn < 3; turn++) {
      const link = await this.#read();
      if (!link) throw await this.#consent.required(this.#user, upstream, 'not-linked');
      const got = await this.#valid(link);
      if (got) return got;
    }
    throw this.#unavailable('the link kept changing while it was being refreshed');
  }

  #read(): Promise<StoredLink | undefined> {
    return this.#vault.loadLink(this.#client.upstream, this.#user).catch((err: Error) => Promise.reject(this.#unavailable(`the vault could not be read: ${err.message}`)));
  }

  /** The stored token, else its refresh (a concurrent refresh's successor comes with its own consent time); undefined when the link changed meanwhile. */
  async #valid(link: StoredLink): Promise<ConsentedToken | undefined> {
    const upstream = this.#client.upstream;
    const t = link.tokens;
    const refused = this.#refused === t.accessToken;
    // The refused token is no longer stored: it cannot come back, so there is nothing left to refresh.
    if (!refused) this.#refused = undefined;
    // When it was issued said when it is due (never before half its life); a link stored without that keeps the skew rule;
    // a refresh of it that failed for the moment is not tried again for REFRESH_RETRY_MS (while the token is valid).
    const renew = t.renewAt ?? t.expiresAt - this.#client.settings.refreshSkewMs;
    const due = this.#retry !== undefined && this.#retry.refreshToken === t.refreshToken ? Math.max(renew, Math.min(this.#retry.at, t.expiresAt)) : renew;
    if (!refused && Date.now() < due) return { token: t.accessToken, linkedAt: link.linkedAt };
    if (!t.refreshToken) {
      if (!refused && Date.now() < t.expiresAt) return { token: t.accessToken, linkedAt: link.linkedAt };
      // Only the link that ran out goes: a consent given since it was read is kept (and read next).
      if (!(await this.#vault.discard(upstream, this.#user, link))) return undefined;
      throw await this.#consent.required(this.#user, upstream, 'expired');
    }
    return this.#refresh(link, refused);
  }

  /**
   * The refresh of `link`, made by one credential of all replicas at a time: while another holds the claim,
   * its token is waited for (undefined: the link changed, read it again) instead of this refresh token being
   * spent too, which a rotating server refuses (the loser then waited SUCCESSOR_WAIT_MS only, and a winner
   * slower than that found the link deleted). A claim not had within REFRESH_CLAIM_MS refreshes unclaimed.
   */
  async #refresh(link: StoredLink, refused: boolean): Promise<ConsentedToken | undefined> {
    const claim = await this.#claim(link);
    if (claim === null) return undefined;
    try {
      return await this.#refreshNow(link, refused);
    } finally {
      if (claim !== undefined) await this.#vault.store.releaseRefresh(this.#client.upstream, this.#user, claim).catch(() => {});
    }
  }

  /** This credential's claim on the refresh of `link`; null when the link changed while another held it; undefined when none was had in time. */
  async #claim(link: StoredLink): Promise<string | null | undefined> {
    const deadline = Date.now() + REFRESH_CLAIM_MS;
    // Bounded in count and time: each turn waits SUCCESSOR_POLL_MS.
    for (let turn = 0; turn <= REFRESH_CLAIM_MS / SUCCESSOR_POLL_MS && Date.now() < deadline; turn++) {
      const claim = await this.#vault.store.claimRefresh(this.#client.upstream, this.#user, REFRESH_CLAIM_MS).catch((err: Error) => Promise.reject(this.#unavailable(`the vault could not be read: ${err.message}`)));
      if (claim !== undefined) return claim;
      await sleep(SUCCESSOR_POLL_MS);
      const now = await this.#read();
      // Gone while another refreshed it: its grant ended there (see #successor), as this one's would have.
      if (!now) throw await this.#consent.required(this.#user, this.#client.upstream, 'expired');
      if (now.version !== link.version) return null;
    }
    return undefined;
  }

  async #refreshNow(link: StoredLink, refused: boolean): Promise<ConsentedToken | undefined> {
    const upstream = this.#client.upstream;
    const t = link.tokens;
    let next: UserTokens;
    try {
      next = await this.#client.refresh(t.refreshToken!);
    } catch (err) {
      if (!(err instanceof GrantRefused && err.error === 'invalid_grant')) {
        // Not the user's grant: the authorization server is down or throttling, or it refuses the
        // gateway's client (a mistyped secret after a reload). Deleting links for that would make every
        // affected user consent again; the link stays, and a token still valid is still good.
        const failure = err instanceof GrantRefused ? this.#consent.clientRefused(this.#user, upstream, err) : err;
        if (refused || Date.now() >= t.expiresAt) throw failure;
        this.#retry = { refreshToken: t.refreshToken!, at: Date.now() + REFRESH_RETRY_MS };
        return { token: t.accessToken, linkedAt: link.linkedAt };
      }
      // Another replica (or another client of this process, after a reload) may be refreshing the same
      // token: a rotating server refused us because it spent it. Its token is then ours too.
      const successor = await this.#successor(t);
      if (!successor) throw await this.#consent.required(this.#user, upstream, 'expired');
      if (Date.now() < successor.tokens.expiresAt) return { token: successor.tokens.accessToken, linkedAt: successor.linkedAt };
      throw this.#unavailable('a concurrent refresh stored a token that has already expired');
    }
    // Stored only over the link it was refreshed from: a revocation or a new consent (perhaps as another
    // account) while the authorization server answered wins, and the refreshed token is neither stored
    // nor used (the next read finds what is there now).
    if (!(await this.#vault.update(upstream, this.#user, link, { ...next, refreshToken: next.refreshToken ?? t.refreshToken }))) return undefined;
    this.#refused = undefined;
    return { token: next.accessToken, linkedAt: link.linkedAt };
  }

  /**
   * After invalid_grant for t's refresh token: the tokens a concurrent refresh stored in its place, or
   * undefined when the link is gone. A refused token still stored after SUCCESSOR_WAIT_MS is a grant that
   * ended: it is deleted then, and only while still stored (a refresh written meanwhile wins).
   */
  async #successor(t: UserTokens): Promise<StoredLink | undefined> {
    const upstream = this.#client.upstream;
    const deadline = Date.now() + SUCCESSOR_WAIT_MS;
    // Bounded: each failed delete means the link changed meanwhile, which the next read shows.
    for (let deletes = 0; deletes < 3; ) {
      const now = await this.#read();
      if (!now) return undefined;
      if (now.tokens.refreshToken !== t.refreshToken || now.tokens.accessToken !== t.accessToken) return now;
      if (Date.now() < deadline) {
        await sleep(SUCCESSOR_POLL_MS);
        continue;
      }
      if (await this.#vault.revokeIf(upstream, this.#user, t.refreshToken!)) return undefined;
      deletes++;
    }
    throw this.#unavailable('the link kept changing while its refused refresh token was being removed');
  }

  #unavailable(why: string): GatewayError {
    const upstream = this.#client.upstream;
    return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${upstream}": ${why}; retry shortly`, { upstream });
  }

  get upstream(): string {
    return this.#client.upstream;
  }

  toJSON(): Record<string, string> {
    return { upstream: this.#client.upstream };
  }
}

/**
 * One upstream connection's view of a user's consented token. Its upstream session was opened as the
 * account of one consent. After a revocation and a new consent (perhaps another account there, or a grant
 * that ended and was given again), that session went on under the new consent's token: two accounts in one
 * upstream session, and an upstream that binds its sessions to their user refused every call (403) until
 * the user's instance idled out, which an active user never let happen. A token of another consent than
 * the one this connection started with now closes the connection (`changed`): the instance reconnects, as
 * the newly linked account, and the call is retried there (details.unsent: it never left).
 */
export class ConsentPin implements BearerSource {
  readonly #source: UserOAuthCredential;
  readonly #changed: () => void;
  #linkedAt: number | undefined;

  constructor(source: UserOAuthCredential, changed: () => void) {
    this.#source = source;
    this.#changed = changed;
  }

  async token(): Promise<string> {
    const g = await this.#source.grant();
    this.#linkedAt ??= g.linkedAt;
    if (g.linkedAt === this.#linkedAt) return g.token;
    this.#changed();
    const upstream = this.#source.upstream;
    throw new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', `your link to upstream "${upstream}" changed: the gateway reconnects to it as the account now linked; retry shortly`, { upstream, unsent: true });
  }

  invalidate(refused: string): void {
    this.#source.invalidate(refused);
  }
}
