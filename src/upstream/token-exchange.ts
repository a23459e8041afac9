import { request, type Dispatcher } from 'undici';
import { boundedInformational } from './informational-answers.js';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { bearerTokenOf, tokenLifeMs, type BearerSource } from './bearer-source.js';
import { ClientCredentials } from './client-credentials.js';
import { readWithin } from './read-body.js';
import { RenewedToken, type IssuedToken } from './renewed-token.js';
import { readSecretFile } from './secret-file.js';
import { tokenRefusalText } from './sent-credentials.js';
import { noSubjectToken, type SubjectTokens } from './subject-tokens.js';
import type { UpstreamUser } from './upstream-user.js';

export type TokenExchangeSettings = Extract<NonNullable<RemoteUpstreamConfig['auth']>, { type: 'token-exchange' }>;

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
/** An authorization server's words in a refusal are shown to the user, bounded. */
const MAX_DESCRIPTION = 200;
/** An exchanged token's life when the answer states none (RFC 8693 §2.2.1 makes expires_in optional). */
const UNSTATED_LIFE_MS = 300_000;

/** What one upstream's exchanges share: its settings, the gateway's client secret and actor token. */
export class TokenExchangeClient {
  readonly upstream: string;
  readonly settings: TokenExchangeSettings;
  /** The gateway's own client-credentials token, sent as actor_token (one for all users). */
  readonly actor: ClientCredentials | undefined;
  /** How long the token endpoint's answer may take to read in all (http.bodyTimeoutMs): see readWithin. */
  readonly withinMs: number;

  constructor(upstream: string, settings: TokenExchangeSettings, dispatcher: Dispatcher, withinMs: number) {
    this.upstream = upstream;
    this.settings = settings;
    this.withinMs = withinMs;
    this.#secret(); // an unreadable file fails the user's start, which says why (secret-file.ts)
    const secret = () => this.#secret();
    this.actor = settings.actorToken
      ? new ClientCredentials(
          { type: 'client-credentials', tokenUrl: settings.tokenEndpoint, clientId: settings.clientId, get clientSecret() { return secret(); }, scope: undefined, audience: undefined, refreshSkewMs: settings.refreshSkewMs },
          dispatcher,
          withinMs,
        )
      : undefined;
  }

  /** HTTP Basic client authentication (RFC 6749 §2.3.1: each part form-encoded first). */
  get basic(): string {
    return Buffer.from(`${encodeURIComponent(this.settings.clientId)}:${encodeURIComponent(this.#secret())}`).toString('base64');
  }

  /**
   * The gateway's client secret. A clientSecretFile is read at each token request (one per user and token
   * life, never per call), as admin.tokenFile is read per request: held from the first user's start, a
   * rotated secret (a Kubernetes Secret updated, the old one revoked) was sent until a restart, a reload too.
   */
  #secret(): string {
    return this.settings.clientSecret ?? readSecretFile(this.upstream, this.settings.clientSecretFile!);
  }
}

/**
 * One user's token for one upstream (RFC 8693 token exchange): the user's validated access token is
 * the subject_token, the gateway's client credentials authenticate the request (and, by default, its
 * own token is the actor_token), and the answer is a token whose audience is the upstream. Cached
 * until refreshSkewMs before it expires (never less than half its life, which is at least MIN_LIFE_MS);
 * concurrent callers share one exchange.
 */
export class TokenExchange implements BearerSource {
  readonly #client: TokenExchangeClient;
  readonly #user: UpstreamUser;
  readonly #subjects: SubjectTokens;
  readonly #dispatcher: Dispatcher;
  readonly #token: RenewedToken;
  /** The subject token the token held (or being got) is an exchange of. */
  #from: string | undefined;

  constructor(client: TokenExchangeClient, user: UpstreamUser, subjects: SubjectTokens, dispatcher: Dispatcher, renewalFailed?: (err: Error) => void) {
    this.#client = client;
    this.#user = user;
    this.#subjects = subjects;
    this.#dispatcher = dispatcher;
    // Outlived only for want of the authorization server (down, failing: SWB_UPSTREAM_UNAVAILABLE): a
    // refusal (the user's token, the gateway's client) is not, nor is a token the upstream refused.
    const outlives = (err: unknown) => (err as GatewayError).code === 'SWB_UPSTREAM_UNAVAILABLE';
    this.#token = new RenewedToken(() => this.#exchange(), { skewMs: client.settings.refreshSkewMs, outlives, renewalFailed });
  }

  /** A token to send; through an outage of the authorization server, the one held while it has not expired (RenewedToken). */
  token(): Promise<string> {
    // A session's client may send another token mid-session (a narrower one handed down): its calls go with an
    // exchange of that one from the next call on. Cached until renewal, the broader token's grant served them.
    // An expired one (none current) changes nothing here: the next exchange says so (noSubjectToken).
    const subject = this.#from === undefined ? undefined : this.#subjects.current(this.#user);
    if (subject !== undefined && subject !== this.#from) {
      this.#from = undefined;
      this.#token.drop();
    }
    return this.#token.token();
  }

  /** As ClientCredentials.invalidate: a late 401 for a token already replaced keeps the new one. */
  invalidate(refused: string): void {
    this.#token.invalidate(refused);
  }

  /** The expiry of the cached token (operators' views), if one is held. */
  get expiresAt(): number | undefined {
    return this.#token.expiresAt;
  }

  async #form(): Promise<URLSearchParams> {
    const s = this.#client.settings;
    const subject = this.#subjects.current(this.#user);
    // Only the user's next request can bring one (awaitsUser): an instance that failed to start for it waits
    // for that request, which starts it at once, rather than a backoff timer that would refuse it meanwhile.
    // Not kept: expired, or verified before a reload gave the config its first token-exchange upstream (only
    // from then on are tokens kept: no cost per request without one). Either way the next request brings it;
    // the refusal says which, since only an expired one needs a fresh token.
    if (!subject) throw noSubjectToken(this.#client.upstream, this.#subjects.missing(this.#user));
    this.#from = subject;
    const form = new URLSearchParams({ grant_type: GRANT, subject_token: subject, subject_token_type: ACCESS_TOKEN, requested_token_type: ACCESS_TOKEN });
    if (s.audience) form.set('audience', s.audience);
    if (s.resource) form.set('resource', s.resource);
    if (s.scope) form.set('scope', s.scope);
    if (this.#client.actor) {
      form.set('actor_token', await this.#client.actor.token().catch((err: Error) => Promise.reject(this.#unavailable(`the gateway's own token: ${err.message}`))));
      form.set('actor_token_type', ACCESS_TOKEN);
    }
    return form;
  }

  /** `retried`: the actor token was fetched again after a refusal (see below); a second refusal stands. */
  async #exchange(retried = false): Promise<IssuedToken> {
    const form = await this.#form();
    const authorization = `Basic ${this.#client.basic}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(this.#client.settings.tokenEndpoint, {
        method: 'POST',
        dispatcher: this.#dispatcher,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization },
        body: form.toString(),
        onInfo: boundedInformational,
      });
    } catch (err) {
      throw this.#unavailable((err as Error).message);
    }
    const text = await readWithin(res.body, this.#client.withinMs).catch((err: Error) => Promise.reject(this.#unavailable(`the token endpoint's answer (HTTP ${res.statusCode}): ${err.message}`)));
    const doc = parse(text);
    if (res.statusCode >= 500) throw this.#unavailable(`HTTP ${res.statusCode}`);
    if (res.statusCode !== 200) {
      // Its words without what was sent (a server may echo the client secret or the tokens): tokenRefusalText.
      const error = typeof doc.error === 'string' ? tokenRefusalText(doc.error, authorization, form, 64) : `HTTP ${res.statusCode}`;
      const why = typeof doc.error_description === 'string' ? `: ${tokenRefusalText(doc.error_description, authorization, form, MAX_DESCRIPTION)}` : '';
      const refusal = this.#refused(error, `the authorization server refused to exchange your token for upstream "${this.#client.upstream}" (${error}${why})`);
      const actor = form.get('actor_token');
      if (actor === null || retried) throw refusal;
      // The actor token may be what was refused: kept at least MIN_LIFE_MS (or revoked), it can be sent past
      // its real expiry, and no upstream 401 renews it here. Every exchange was refused until it was renewed.
      // A new one that cannot be had (the client itself refused) leaves the refusal as it was.
      this.#client.actor!.invalidate(actor);
      await this.#client.actor!.token().catch(() => Promise.reject(refusal));
      return this.#exchange(true);
    }
    // At least MIN_LIFE_MS: a tiny expires_in made every request to the upstream exchange a token.
    return { value: bearerTokenOf(doc, (why) => this.#unavailable(why)), lifeMs: tokenLifeMs(doc.expires_in, UNSTATED_LIFE_MS) };
  }

  #refused(reason: string, message: string): GatewayError {
    return new GatewayError('SWB_UPSTREAM_CREDENTIAL_REFUSED', message, { upstream: this.#client.upstream, reason });
  }

  #unavailable(why: string): GatewayError {
    return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `token exchange for upstream "${this.#client.upstream}" failed (${why}); retry shortly`, { upstream: this.#client.upstream });
  }
}

function parse(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
