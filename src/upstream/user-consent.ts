import { randomUUID } from 'node:crypto';
import type { Agent } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { authServerAgent, authServerHttp } from './auth-server-agent.js';
import type { BearerSource } from './bearer-source.js';
import type { GatewaySignIn, UserCheck } from './gateway-sign-in.js';
import type { ConsentFlow, ConsentFlows, ConsentState, StateRefusal } from './consent-flows.js';
import type { CredentialVault, LinkInfo, UserTokens } from './credential-vault.js';
import { UserOAuthClient, GrantRefused, type UserOAuthSettings } from './user-oauth-client.js';
import { UserOAuthCredential, type ConsentAsker, type ConsentReason } from './user-oauth-credential.js';
import { userLabel, type UpstreamUser } from './upstream-user.js';
import { vaultAudience } from './vault-audience.js';
import { changedBinding, misrouted, revokedMeanwhile, signInRedirectUri, voided, upstreamRedirectUri, type CallbackAt } from './consent-binding.js';

export interface UserConsentOptions {
  vault: CredentialVault;
  flows: ConsentFlows;
  /** The gateway's public URL (server.publicUrl), which browsers and the authorization server reach. */
  publicUrl: string;
  /** The upstream's config in force (a reload may change it). */
  upstream(name: string): UpstreamConfig | undefined;
  logger: Logger;
  /** vault.verifyUser: who completes a link signs in at the gateway's identity provider first. */
  signIn?: GatewaySignIn | undefined;
}

/** A user's token for a process that keeps it, and whether the consent it came from still stands (see processCredential). */
export interface ProcessCredential {
  token(): Promise<string>;
  check(): Promise<GatewayError | undefined>;
}

/**
 * What /oauth/start did: the authorization server's URL and the browser's binding, or why it cannot now:
 * the sign-in could not be recorded (`store`, 503) or the authorization server could not be reached (502).
 */
export type StartOutcome =
  | { location: string; state: string; browser: string; maxAgeMs: number }
  | { unavailable: string; reason: 'store'; retryAfterSeconds: number }
  | { unavailable: string; reason: 'authorization-server' }
  | { refused: string; status: number };

/**
 * What opening a consent link shows: whose link it is and to which upstream, and the confirmation its
 * form and cookie carry (ConsentFlows.confirmation); or that the flow could not be read now.
 */
export type PreviewOutcome =
  | { upstream: string; user: UpstreamUser; browser: string; form: string; maxAgeMs: number }
  | { unavailable: string; reason: 'store'; retryAfterSeconds: number };

/** The confirmation a POST to /oauth/start brings: the page's cookie and its form's value. */
export interface StartProof {
  browser: string | undefined;
  form: string | undefined;
}

type ConsentingUpstream = UpstreamConfig & { auth: UserOAuthSettings };

/** Retry-After of a sign-in that could not be recorded, when the store said nothing better (a failing store). */
const START_RETRY_SECONDS = 30;

/** What the callback did: linked, or refused and why (shown to the user, never a token); 503 with when to retry. */
export type CallbackOutcome =
  | { linked: string; subject: string }
  | { refused: string; status: number; retryAfterSeconds?: number; otherUser?: boolean }
  // vault.verifyUser: the gateway's sign-in checked, on to the upstream's authorization server (or why not now).
  | Exclude<StartOutcome, { refused: string }>;

const MESSAGES: Record<ConsentReason, (u: string) => string> = {
  'not-linked': (u) => `Upstream "${u}" acts with your own account there: open the link to sign in and consent, then retry.`,
  expired: (u) => `Your consent for upstream "${u}" has ended (expired or revoked at its authorization server): open the link to consent again, then retry.`,
};

/**
 * User consent for user-oauth upstreams, end to end: the per-user credentials (read from the sealed
 * vault), the -32042 that sends a user without a token to /oauth/start, and the two routes' work:
 * start (the flow becomes a state and a PKCE challenge, the browser goes to the authorization server)
 * and callback (the state is checked, the code redeemed, the tokens sealed).
 */
export class UserConsent implements ConsentAsker {
  readonly vault: CredentialVault;
  readonly #flows: ConsentFlows;
  readonly #publicUrl: string;
  readonly #upstream: (name: string) => UpstreamConfig | undefined;
  readonly #logger: Logger;
  readonly #clients = new Map<string, { client: UserOAuthClient; agent: Agent }>();
  readonly #signIn: GatewaySignIn | undefined;

  constructor(o: UserConsentOptions) {
    this.vault = o.vault;
    this.#flows = o.flows;
    this.#publicUrl = o.publicUrl.replace(/\/$/, '');
    this.#upstream = o.upstream;
    this.#logger = o.logger.child({ component: 'consent' });
    this.#signIn = o.signIn;
  }

  /** With vault.verifyUser: the gateway's own authentication, which checks the sign-in's token (app.ts gives the MCP routes' one). */
  checkUsersWith(check: UserCheck): void {
    this.#signIn?.checkWith(check);
  }

  /** Where browsers reach the gateway: the consent pages' POST must come from its origin. */
  get publicUrl(): string {
    return this.#publicUrl;
  }

  credential(u: UpstreamConfig, settings: UserOAuthSettings, owner: UpstreamUser): BearerSource {
    return new UserOAuthCredential(this.#client(u, settings), owner, this.vault, this);
  }

  /**
   * For a process given the user's token at its start (stdio tokenEnv), which keeps it for its life: the
   * token, and a check to make before each request to the process. The check returns the error to answer
   * when a revocation (by the user or an operator, on any replica) or a new consent came since the start:
   * the process must then be stopped, or it would go on acting with the revoked account until the session
   * ended. A vault it cannot read rejects (nothing is stopped for that). The consent's time is read before
   * the token, so a consent in between fails the first check (a needless restart, never a stale token kept).
   */
  processCredential(u: UpstreamConfig, settings: UserOAuthSettings, owner: UpstreamUser): ProcessCredential {
    const source = this.credential(u, settings, owner);
    const linkedAt = () =>
      this.vault.linkedAt(u.name, owner).catch((err: Error) => Promise.reject(new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${u.name}": the vault could not be read: ${err.message}; retry shortly`, { upstream: u.name })));
    let pinned: number | undefined;
    return {
      token: async () => {
        pinned = await linkedAt();
        return source.token();
      },
      check: async () => {
        const now = await linkedAt();
        if (now === pinned) return undefined;
        if (now === undefined) return this.required(owner, u.name, 'not-linked');
        // Not sent: the call is retried once the process restarted with the new token (UpstreamInstance.request).
        return new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', `your link to upstream "${u.name}" changed: its process restarts with the new one; retry shortly`, { upstream: u.name, unsent: true });
      },
    };
  }

  async required(user: UpstreamUser, upstream: string, reason: ConsentReason): Promise<GatewayError> {
    let ref: string;
    try {
      ref = await this.#flows.create(user, upstream);
    } catch (err) {
      // Too many of the user's own links pending (SWB_RATE_LIMITED) is said as it is; anything else is the store failing.
      if (err instanceof GatewayError) return new GatewayError(err.code, `upstream "${upstream}" needs your consent, but ${err.message}`, { ...err.details, upstream });
      return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${upstream}" needs your consent, but the gateway could not record the request (${(err as Error).message}); retry shortly`, { upstream });
    }
    const message = MESSAGES[reason](upstream);
    const url = `${this.#publicUrl}/oauth/start?flow=${encodeURIComponent(ref)}`;
    this.#logger.info({ upstream, user: userLabel(user), reason }, 'consent required');
    return new GatewayError('SWB_UPSTREAM_CONSENT_REQUIRED', message, { upstream, reason, elicitations: [{ mode: 'url', elicitationId: randomUUID(), url, message }] });
  }

  clientRefused(user: UpstreamUser, upstream: string, refusal: GrantRefused): GatewayError {
    // The user can do nothing about it (consenting again would not help): an operator must.
    this.#logger.error(
      { upstream, user: userLabel(user), reason: refusal.error, description: refusal.message },
      "the authorization server refused the gateway's refresh request; the user's link is kept: check the upstream's auth settings (clientId, client secret, scope, token endpoint)",
    );
    return new GatewayError(
      'SWB_UPSTREAM_CREDENTIAL_REFUSED',
      `the authorization server of upstream "${upstream}" refused the gateway's own request (${refusal.error}): a gateway configuration problem, not your consent; your link is kept, retry once an operator has fixed it`,
      { upstream, reason: refusal.error },
    );
  }

  /**
   * GET /oauth/start: the flow read, not taken (a link preview or a prefetch spends nothing), for the page
   * that asks the person who opened it to confirm; undefined for a flow that is forged, used or expired.
   */
  async preview(flowRef: string): Promise<PreviewOutcome | undefined> {
    let flow: ConsentFlow | undefined;
    try {
      flow = await this.#flows.peek(flowRef);
    } catch (err) {
      return this.#unrecorded(err, undefined);
    }
    if (!flow || !this.#consenting(flow.upstream)) return undefined;
    return { upstream: flow.upstream, user: flow.user, ...this.#flows.confirmation(flowRef), maxAgeMs: this.#flows.ttlMs };
  }

  /**
   * POST /oauth/start, from the confirmation page: where the browser goes next and the binding cookie's
   * value; refused (403) without that page's confirmation, the flow left for its owner; undefined for a
   * flow that is forged, used or expired; `unavailable` when the sign-in could not be recorded (see #unrecorded).
   */
  async start(flowRef: string, proof: StartProof): Promise<StartOutcome | undefined> {
    if (!this.#flows.confirmed(flowRef, proof.browser, proof.form)) {
      this.#logger.warn('a consent link was posted without its confirmation page (no page value, or another browser): refused');
      return { refused: 'This request did not come from the confirmation page of this consent link in this browser. Open the link from your own client and confirm there.', status: 403 };
    }
    let flow: ConsentFlow | undefined;
    let u: ConsentingUpstream | undefined;
    try {
      flow = await this.#flows.take(flowRef);
      if (!flow) return undefined;
      u = this.#consenting(flow.upstream);
      if (!u) return undefined;
    } catch (err) {
      return this.#unrecorded(err, flow);
    }
    // With vault.verifyUser the browser first signs in at the gateway's own identity provider (see #signedIn).
    return this.#signIn ? this.#send(flow, this.#signIn.client, 'verify') : this.#send(flow, this.#client(u, u.auth), undefined, vaultAudience(u), u.auth.callback);
  }

  /**
   * The browser sent to an authorization server (the upstream's, or with `verify` the gateway's own) with a
   * new state; `audience`: what the upstream is now (vaultAudience), the consent's binding (see changedBinding);
   * `callback`: the upstream's redirect URI, its own or the shared one (see upstreamRedirectUri).
   */
  async #send(flow: ConsentFlow, client: UserOAuthClient, stage?: 'verify', audience?: string, callback?: 'own' | 'shared'): Promise<StartOutcome> {
    const own = !stage && callback === 'own' ? 'own' : undefined;
    // Its endpoints are found before the sign-in is recorded: one that cannot be reached leaves no state pending.
    const unreachable = await client.discover().then(
      () => undefined,
      (err: unknown) => this.#unreachable(err, flow, stage),
    );
    if (unreachable) return unreachable;
    let begun: Awaited<ReturnType<ConsentFlows['begin']>>;
    try {
      begun = await this.#flows.begin(flow, stage, audience, own);
    } catch (err) {
      return this.#unrecorded(err, flow);
    }
    const location = await client.authorizeUrl({ state: begun.state, challenge: begun.challenge, redirectUri: stage ? signInRedirectUri(this.#publicUrl) : upstreamRedirectUri(this.#publicUrl, flow.upstream, own) });
    return { location, state: begun.state, browser: begun.browser, maxAgeMs: this.#flows.ttlMs };
  }

  /**
   * vault.verifyUser, the gateway's sign-in done: its token authenticated as the MCP routes authenticate a
   * client's, and the browser sent on to the upstream's authorization server only if that is the principal
   * the link was made for; anyone else (the link sent to them) is refused, logged and counted (`otherUser`).
   */
  async #signedIn(s: ConsentState, code: string | undefined, iss: string | undefined): Promise<CallbackOutcome> {
    const signIn = this.#signIn!;
    if (!code) return { refused: 'You did not sign in to the gateway, so the link was not continued.', status: 403 };
    const elsewhere = await this.#fromElsewhere(signIn.client, iss, s);
    if (elsewhere) return elsewhere;
    let who: UpstreamUser;
    try {
      who = await signIn.user(code, s.verifier, signInRedirectUri(this.#publicUrl));
    } catch (err) {
      this.#logger.warn({ upstream: s.upstream, user: userLabel(s.user), reason: err instanceof GrantRefused ? err.error : (err as Error).message }, "consent: the gateway's own sign-in failed or its token was not accepted");
      return { refused: 'Your sign-in to the gateway could not be checked. Retry the call in your client for a new link.', status: 403 };
    }
    if (who.issuer !== s.user.issuer || who.subject !== s.user.subject || who.tenant !== s.user.tenant) {
      this.#logger.warn({ upstream: s.upstream, user: userLabel(s.user), signedIn: userLabel(who) }, 'consent refused: the browser signed in to the gateway as another user than the one the link was made for (a link sent to someone else?)');
      const refused = `You signed in to the gateway as "${who.subject}", but this link was made for the gateway user "${s.user.subject}": nothing was linked. A link someone sent you would have given them your account at "${s.upstream}"; use the links your own client shows you.`;
      return { refused, status: 403, otherUser: true };
    }
    const u = this.#consenting(s.upstream);
    if (!u) return { refused: `Upstream "${s.upstream}" no longer asks for consent.`, status: 400 };
    const sent = await this.#send(s, this.#client(u, u.auth), undefined, vaultAudience(u), u.auth.callback);
    if ('location' in sent) this.#logger.info({ upstream: s.upstream, user: userLabel(s.user) }, 'consent: the gateway user who opened the link is the one it was made for');
    return sent as CallbackOutcome;
  }

  /**
   * The authorization server's metadata could not be read (unreachable, failing, or not usable): the browser
   * is told so, and to retry with a new link (the one opened is spent), not shown the error's JSON.
   */
  #unreachable(err: unknown, flow: ConsentFlow, stage?: 'verify'): StartOutcome {
    this.#logger.warn(
      { upstream: flow.upstream, user: userLabel(flow.user), reason: (err as Error).message, server: stage ? 'gateway sign-in' : 'upstream' },
      'a consent link was opened but the authorization server could not be reached: answered 502',
    );
    const server = stage ? "The gateway's own sign-in (vault.verifyUser)" : `The authorization server of upstream "${flow.upstream}"`;
    return {
      unavailable: `${server} could not be reached. Try again shortly: retry the call in your client for a new link.`,
      reason: 'authorization-server',
    };
  }

  /**
   * The store refused or failed the records of a sign-in: Redis at its memory limit (it lets the flow be
   * taken, GETDEL, and refuses the state, SET) or unreachable, or the user's own calls on another replica
   * took the place the flow left before its state was put (SWB_RATE_LIMITED, saying when to retry). The
   * browser is told to try again with a new link (the one opened may be spent), not shown a bare 500.
   */
  #unrecorded(err: unknown, flow: ConsentFlow | undefined): Extract<StartOutcome, { reason: 'store' }> {
    const given = err instanceof GatewayError ? err.details?.retryAfterSeconds : undefined;
    const seconds = typeof given === 'number' ? given : START_RETRY_SECONDS;
    this.#logger.warn(
      { upstream: flow?.upstream, user: flow && userLabel(flow.user), reason: (err as Error).message },
      'a consent link was opened but the sign-in could not be recorded (pending consent records full, or their store failing): answered 503',
    );
    return {
      unavailable: `The gateway has too many sign-ins in progress, or cannot record yours right now. Try again in ${seconds} seconds: retry the call in your client for a new link.`,
      reason: 'store',
      retryAfterSeconds: seconds,
    };
  }

  /** /oauth/callback (`at`: the shared one, an upstream's own or the gateway's sign-in's): the state strictly checked (known, unused, unexpired, same browser, answered only at the URI it was sent with: misrouted), then the code redeemed and sealed. */
  async callback(q: { state?: string | undefined; code?: string | undefined; error?: string | undefined; iss?: string | undefined }, browser: string | undefined, at: CallbackAt = 'callback'): Promise<CallbackOutcome> {
    if (!q.state) return { refused: 'The authorization server sent no state: this is not the answer to a consent the gateway started.', status: 400 };
    let s: ConsentState | StateRefusal;
    try {
      s = await this.#flows.complete(q.state, browser);
    } catch (err) {
      return this.#unstored(err, undefined);
    }
    if (s === 'unknown') return { refused: 'This consent link is unknown, expired or already used. Retry the call in your client for a new link.', status: 400 };
    if (s === 'other-browser') return { refused: 'This consent was started in another browser. Open the link from your client in this browser.', status: 400 };
    const wrong = misrouted(s, at, this.#logger);
    if (wrong) return wrong;
    if (s.stage === 'verify') return q.error ? { refused: `The gateway's sign-in did not succeed (${q.error.slice(0, 64)}).`, status: 403 } : this.#signedIn(s, q.code, q.iss);
    if (q.error || !q.code) return { refused: `The authorization server did not grant access (${(q.error ?? 'no code').slice(0, 64)}).`, status: 403 };
    const u = this.#consenting(s.upstream);
    if (!u) return { refused: `Upstream "${s.upstream}" no longer asks for consent.`, status: 400 };
    const rebound = await voided(s, u, this.vault, this.#logger).catch((err: unknown) => this.#unstored(err, s));
    if (rebound) return rebound;
    const elsewhere = await this.#fromElsewhere(this.#client(u, u.auth), q.iss, s);
    if (elsewhere) return elsewhere;
    let tokens: UserTokens;
    try {
      tokens = await this.#client(u, u.auth).redeem(q.code, s.verifier, upstreamRedirectUri(this.#publicUrl, s.upstream, s.callback));
    } catch (err) {
      const why = err instanceof GrantRefused ? `the authorization server refused the code (${err.error})` : 'the authorization server could not be reached';
      this.#logger.warn({ upstream: s.upstream, user: userLabel(s.user), reason: err instanceof GrantRefused ? err.error : (err as Error).message }, 'consent callback failed');
      return { refused: `Linking failed: ${why}. Retry the call in your client for a new link.`, status: 502 };
    }
    // A reload during the redemption: the tokens are the old server's, never sealed for the new one.
    const changed = changedBinding(s, this.#consenting(s.upstream), this.#logger);
    if (changed) return changed;
    try {
      if (!(await this.vault.saveConsent(s.upstream, s.user, tokens, s.at ?? 0))) return revokedMeanwhile(s, this.#logger);
    } catch (err) {
      return this.#unstored(err, s);
    }
    this.#logger.info({ upstream: s.upstream, user: userLabel(s.user) }, 'user linked an upstream account');
    return { linked: s.upstream, subject: s.user.subject };
  }

  /**
   * The refusal of an authorization response another server than the state's sent (RFC 9207 `iss`: the
   * mix-up attack, see UserOAuthClient.answerProblem): its code is sent nowhere. A server that cannot be
   * reached now is left to the redemption, which fails before anything is sent.
   */
  async #fromElsewhere(client: UserOAuthClient, iss: string | undefined, s: ConsentState): Promise<CallbackOutcome | undefined> {
    const problem = await client.answerProblem(iss).catch(() => undefined);
    if (problem === undefined) return undefined;
    this.#logger.warn({ upstream: s.upstream, user: userLabel(s.user), reason: problem }, 'consent callback refused: the authorization response is not from the server the consent was sent to (a mix-up attack?); its code was not redeemed');
    return { refused: `Nothing was linked: the answer ${problem}. Retry the call in your client for a new link.`, status: 400 };
  }

  /**
   * The store failed or refused the callback's records (unreachable; Redis at its memory limit lets the state
   * be taken, GETDEL, and refuses the link, HSET): said as that, 503, not as the authorization server failing.
   */
  #unstored(err: unknown, s: ConsentState | undefined): CallbackOutcome {
    this.#logger.warn({ upstream: s?.upstream, user: s && userLabel(s.user), reason: (err as Error).message }, 'consent callback: the link could not be stored (its store failing or full): answered 503');
    const refused = `The gateway could not store your link right now. Try again in ${START_RETRY_SECONDS} seconds: retry the call in your client for a new link.`;
    return { refused, status: 503, retryAfterSeconds: START_RETRY_SECONDS };
  }

  links(user: UpstreamUser): Promise<LinkInfo[]> {
    return this.vault.links({ issuer: user.issuer, subject: user.subject, tenant: user.tenant });
  }

  async revoke(upstream: string, user: UpstreamUser, by: 'user' | 'operator'): Promise<boolean> {
    const removed = await this.vault.revoke(upstream, user);
    if (removed) this.#logger.info({ upstream, user: userLabel(user), by }, 'upstream link revoked');
    return removed;
  }

  /** The upstream by that name if it still asks for consent (remote, or stdio with the token in its environment). */
  #consenting(name: string): ConsentingUpstream | undefined {
    const u = this.#upstream(name);
    return u?.auth?.type === 'user-oauth' ? (u as ConsentingUpstream) : undefined;
  }

  #client(u: UpstreamConfig, settings: UserOAuthSettings): UserOAuthClient {
    let c = this.#clients.get(u.name);
    if (!c || c.client.settings !== settings) {
      // A reload changed the settings. The old client is not closed: the links made before the reload
      // still refresh through it until they close, and its idle connections end by their keep-alive.
      const agent = authServerAgent(u);
      c = { client: new UserOAuthClient({ name: u.name, url: u.transport === 'stdio' ? undefined : u.url }, settings, agent, authServerHttp(u).bodyTimeoutMs), agent };
      this.#clients.set(u.name, c);
    }
    return c.client;
  }

  async close(): Promise<void> {
    const agents = [...this.#clients.values()].map((c) => c.agent);
    this.#clients.clear();
    await Promise.all([...agents.map((a) => a.close().catch(() => {})), this.#signIn?.close()]);
    await this.vault.store.close();
  }

  toJSON(): Record<string, number> {
    return { clients: this.#clients.size };
  }
}
