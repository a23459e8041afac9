import { request, type Dispatcher } from 'undici';
import { boundedInformational } from './informational-answers.js';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { bearerTokenOf, renewAt, tokenLifeMs } from './bearer-source.js';
import type { UserTokens } from './credential-vault.js';
import { discoveredUrlProblem, withoutTrailingSlash } from './discovered-urls.js';
import { readWithin } from './read-body.js';
import { readSecretFile } from './secret-file.js';
import { tokenRefusalText } from './sent-credentials.js';

export type UserOAuthSettings = Extract<NonNullable<RemoteUpstreamConfig['auth']>, { type: 'user-oauth' }>;

interface Endpoints {
  authorization: string;
  token: string;
  /** The server's issuer identifier, when discovery found it (its metadata's, checked): what its answers' RFC 9207 `iss` must be. */
  issuer?: string | undefined;
  /** Its metadata says it names itself in every authorization response (RFC 9207 §3). */
  issInAnswers?: boolean;
}

/** An authorization server's words in a refusal are shown to the user, bounded. */
const MAX_DESCRIPTION = 200;
/** A token's life when the token endpoint states none (RFC 6749 §5.1 makes expires_in optional). */
const DEFAULT_TTL_MS = 3_600_000;

/**
 * The token endpoint refused a request (4xx but 408 and 429): `error` is the OAuth error code, else
 * `HTTP <status>`. Only invalid_grant is about the user's grant (consent again); any other (invalid_client,
 * invalid_scope, a proxy's 403) is about the gateway's client or request.
 */
export class GrantRefused extends Error {
  readonly error: string;
  constructor(error: string, description: string) {
    super(description);
    this.error = error;
  }
}

/**
 * The gateway as an OAuth 2.1 client of one upstream's authorization server (authorization code with
 * PKCE S256, refresh). Endpoints are configured, or discovered once: the authorization server from
 * `authorizationServer` or from the upstream's RFC 9728 metadata, its endpoints from its RFC 8414 (or
 * OpenID) metadata. The client secret, if any, goes only to the token endpoint.
 */
export class UserOAuthClient {
  readonly upstream: string;
  readonly settings: UserOAuthSettings;
  /** A remote upstream's URL: the default resource indicator and where discovery starts. A stdio upstream has none. */
  readonly #upstreamUrl: string | undefined;
  readonly #dispatcher: Dispatcher;
  /** How long an answer of the authorization server may take to read in all (http.bodyTimeoutMs): see readWithin. */
  readonly #withinMs: number;
  #endpoints: Promise<Endpoints> | undefined;
  /**
   * Refreshes in flight, by refresh token: two credentials of one user in this process (per-session
   * processes, each start its own) share one request, since a rotating server refuses the second.
   */
  readonly #refreshing = new Map<string, Promise<UserTokens>>();

  constructor(u: { name: string; url?: string | undefined }, settings: UserOAuthSettings, dispatcher: Dispatcher, withinMs: number) {
    this.upstream = u.name;
    this.settings = settings;
    this.#upstreamUrl = u.url;
    this.#secret(); // an unreadable file fails here, as before (secret-file.ts)
    this.#dispatcher = dispatcher;
    this.#withinMs = withinMs;
  }

  /** RFC 8707: the configured resource, else the upstream's URL; none for a stdio upstream without one. */
  get #resource(): string | undefined {
    return this.settings.resource ?? this.#upstreamUrl;
  }

  /**
   * The authorization server's endpoints, found now if they were not: rejects with SWB_UPSTREAM_UNAVAILABLE
   * when its metadata cannot be read or is unusable. /oauth/start asks before it records the sign-in.
   */
  async discover(): Promise<void> {
    await this.#discover();
  }

  /** Where the user's browser goes to consent. */
  async authorizeUrl(o: { state: string; challenge: string; redirectUri: string }): Promise<string> {
    const url = new URL((await this.#discover()).authorization);
    const p = url.searchParams;
    p.set('response_type', 'code');
    p.set('client_id', this.settings.clientId);
    p.set('redirect_uri', o.redirectUri);
    p.set('state', o.state);
    p.set('code_challenge', o.challenge);
    p.set('code_challenge_method', 'S256');
    if (this.#resource) p.set('resource', this.#resource);
    if (this.settings.scope) p.set('scope', this.settings.scope);
    return url.toString();
  }

  /**
   * Why an authorization response naming issuer `iss` (RFC 9207) is not this server's, or undefined. Every
   * server sends the browser back to the one callback, so a malicious one, given a state and PKCE challenge,
   * can send the browser on to another server with them (the mix-up attack, RFC 9700 §4.4): that server's
   * code then came back with this server's state, and was redeemed here, verifier included.
   */
  async answerProblem(iss: string | undefined): Promise<string | undefined> {
    const e = await this.#discover();
    if (iss === undefined) return e.issInAnswers ? 'it names no issuer, which this authorization server always does (RFC 9207)' : undefined;
    if (e.issuer === undefined || withoutTrailingSlash(iss) === withoutTrailingSlash(e.issuer)) return undefined;
    return `it comes from another authorization server (${bounded(iss)}) than the one it was sent to (${e.issuer})`;
  }

  redeem(code: string, verifier: string, redirectUri: string): Promise<UserTokens> {
    const form: Record<string, string> = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri };
    if (this.#resource) form.resource = this.#resource;
    return this.#grant(form);
  }

  refresh(refreshToken: string): Promise<UserTokens> {
    let inflight = this.#refreshing.get(refreshToken);
    if (!inflight) {
      const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
      if (this.#resource) form.resource = this.#resource;
      if (this.settings.scope) form.scope = this.settings.scope;
      inflight = this.#grant(form).finally(() => this.#refreshing.delete(refreshToken));
      this.#refreshing.set(refreshToken, inflight);
    }
    return inflight;
  }

  /**
   * The client secret, if any. A clientSecretFile is read at each token request (a code or refresh grant),
   * so a rotated secret is used from the next one; held from the start, it was sent until a restart.
   */
  #secret(): string | undefined {
    const s = this.settings;
    return s.clientSecret ?? (s.clientSecretFile ? readSecretFile(this.upstream, s.clientSecretFile) : undefined);
  }

  async #grant(fields: Record<string, string>): Promise<UserTokens> {
    const { token } = await this.#discover();
    const form = new URLSearchParams(fields);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    // RFC 6749 §2.3.1: a confidential client authenticates with HTTP Basic; a public one names itself.
    const secret = this.#secret();
    if (secret !== undefined) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(this.settings.clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    else form.set('client_id', this.settings.clientId);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(token, { method: 'POST', dispatcher: this.#dispatcher, headers, body: form.toString(), onInfo: boundedInformational });
    } catch (err) {
      throw this.#unavailable((err as Error).message);
    }
    const doc = parse(await readWithin(res.body, this.#withinMs).catch((err: Error) => Promise.reject(this.#unavailable(`the token endpoint's answer (HTTP ${res.statusCode}): ${err.message}`))));
    // Throttled (429), timed out (408) or failing (5xx): the grant is not in question, only the moment.
    if (res.statusCode >= 500 || res.statusCode === 429 || res.statusCode === 408) throw this.#unavailable(`HTTP ${res.statusCode} from the token endpoint`);
    if (res.statusCode !== 200) {
      // Logged (UserConsent.clientRefused): without what was sent, which a server may echo (tokenRefusalText).
      const error = typeof doc.error === 'string' ? tokenRefusalText(doc.error, headers.authorization, form, 64) : `HTTP ${res.statusCode}`;
      throw new GrantRefused(error, typeof doc.error_description === 'string' ? tokenRefusalText(doc.error_description, headers.authorization, form, MAX_DESCRIPTION) : error);
    }
    const accessToken = bearerTokenOf(doc, (why) => this.#unavailable(why));
    // At least 30 s, and refreshed no earlier than half its life: a token living no longer than the skew
    // (or a fraction of a second) was refreshed for every request, spending a rotating refresh token each time.
    const ttl = tokenLifeMs(doc.expires_in, DEFAULT_TTL_MS);
    const now = Date.now();
    return {
      accessToken,
      refreshToken: typeof doc.refresh_token === 'string' && doc.refresh_token !== '' ? doc.refresh_token : undefined,
      expiresAt: now + ttl,
      renewAt: renewAt(now, ttl, this.settings.refreshSkewMs),
      scope: typeof doc.scope === 'string' ? doc.scope : undefined,
    };
  }

  #discover(): Promise<Endpoints> {
    const s = this.settings;
    // Endpoints configured: no issuer is known (authorizationServer beside them was never checked as one).
    if (s.authorizationEndpoint && s.tokenEndpoint) return Promise.resolve({ authorization: s.authorizationEndpoint, token: s.tokenEndpoint });
    // Found once; a failure is not kept (the next consent tries again).
    this.#endpoints ??= this.#find().catch((err: unknown) => {
      this.#endpoints = undefined;
      throw err;
    });
    return this.#endpoints;
  }

  async #find(): Promise<Endpoints> {
    const issuer = this.settings.authorizationServer ?? (await this.#protectedResourceIssuer());
    const u = new URL(issuer);
    const path = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
    // RFC 8414 §3 first (well-known inserted before the path), then OpenID Connect discovery (appended).
    for (const url of [`${u.origin}/.well-known/oauth-authorization-server${path}`, `${u.origin}${path}/.well-known/openid-configuration`]) {
      const doc = await this.#getJson(url);
      if (!doc) continue;
      if (doc.issuer !== issuer.replace(/\/$/, '') && doc.issuer !== issuer) throw this.#unavailable(`the metadata at ${url} names issuer ${bounded(doc.issuer)}, not ${issuer}`);
      if (typeof doc.authorization_endpoint !== 'string' || !URL.canParse(doc.authorization_endpoint) || typeof doc.token_endpoint !== 'string') throw this.#unavailable(`the metadata at ${url} has no authorization_endpoint or token_endpoint`);
      // Whoever runs the issuer says where its endpoints are, but not anywhere: see discoveredUrlProblem.
      for (const key of ['authorization_endpoint', 'token_endpoint'] as const) {
        const problem = discoveredUrlProblem(doc[key] as string, this.#operatorOrigins);
        if (problem) throw this.#unavailable(`the metadata at ${url} lists ${key} ${bounded(doc[key])}, which ${problem}; not used`);
      }
      return { authorization: doc.authorization_endpoint, token: doc.token_endpoint, issuer: doc.issuer as string, issInAnswers: doc.authorization_response_iss_parameter_supported === true };
    }
    throw this.#unavailable(`no authorization server metadata at ${issuer}`);
  }

  /** The origins the operator wrote (the upstream's URL, authorizationServer): plain http there is their choice. */
  get #operatorOrigins(): string[] {
    return [this.#upstreamUrl, this.settings.authorizationServer].flatMap((v) => (v !== undefined && URL.canParse(v) ? [new URL(v).origin] : []));
  }

  /**
   * RFC 9728: the upstream names its authorization server in its protected resource metadata, which is used
   * only when its `resource` is the upstream (§3.3: the URL the well-known was made from; or the upstream's URL,
   * or auth.resource, which root metadata may name), and only a server discoveredUrlProblem allows.
   */
  async #protectedResourceIssuer(): Promise<string> {
    // The schema asks a stdio upstream (no URL) for its authorization server; a reload cannot skip that.
    if (this.#upstreamUrl === undefined) throw this.#unavailable('a stdio upstream has no URL to discover from; configure auth.authorizationServer or the endpoints');
    const u = new URL(this.#upstreamUrl);
    const path = u.pathname === '/' ? '' : u.pathname;
    let other: string | undefined;
    for (const [url, resource] of [[`${u.origin}/.well-known/oauth-protected-resource${path}`, `${u.origin}${path}`], [`${u.origin}/.well-known/oauth-protected-resource`, u.origin]] as const) {
      const doc = await this.#getJson(url);
      if (!doc) continue;
      const ours = [resource, this.#upstreamUrl, this.settings.resource].flatMap((r) => (r === undefined ? [] : [withoutTrailingSlash(r)]));
      if (typeof doc.resource !== 'string' || !ours.includes(withoutTrailingSlash(doc.resource))) {
        other ??= `the protected resource metadata at ${url} describes ${bounded(doc.resource)}, not ${resource}`;
        continue;
      }
      const first = Array.isArray(doc.authorization_servers) ? doc.authorization_servers[0] : undefined;
      if (typeof first !== 'string') continue;
      const problem = discoveredUrlProblem(first, this.#operatorOrigins);
      if (problem) throw this.#unavailable(`the upstream names the authorization server ${bounded(first)} (${url}), which ${problem}; not used (configure auth.authorizationServer)`);
      return first;
    }
    throw this.#unavailable(`${other ?? 'the upstream publishes no authorization server (RFC 9728)'}; configure auth.authorizationServer or the endpoints`);
  }

  async #getJson(url: string): Promise<Record<string, unknown> | undefined> {
    try {
      const res = await request(url, { dispatcher: this.#dispatcher, headers: { accept: 'application/json' }, onInfo: boundedInformational });
      const text = await readWithin(res.body, this.#withinMs);
      // Only a JSON object is a document: a page (a web app answering every path with 200) is none, and the
      // next URL is tried; taken as metadata naming no issuer, it failed discovery at the first URL.
      const doc: unknown = res.statusCode === 200 ? JSON.parse(text) : undefined;
      return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
    } catch (err) {
      // A destination refused at connection (authServerAgent: a name resolving to link-local) is said, not taken for no document.
      if (err instanceof GatewayError) throw this.#unavailable(err.message);
      return undefined;
    }
  }

  #unavailable(why: string): GatewayError {
    return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `the authorization server of upstream "${this.upstream}" failed (${why}); retry shortly`, { upstream: this.upstream });
  }
}

/** A value from a metadata document, for a message: a string as it is (bounded), anything else as JSON. */
function bounded(v: unknown): string {
  return (typeof v === 'string' ? v : String(JSON.stringify(v))).slice(0, MAX_DESCRIPTION);
}

function parse(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
