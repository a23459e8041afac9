import { request, type Dispatcher } from 'undici';
import { boundedInformational } from './informational-answers.js';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { bearerTokenOf, tokenLifeMs, type BearerSource } from './bearer-source.js';
import { RenewedToken, type IssuedToken } from './renewed-token.js';
import { readWithin } from './read-body.js';

type Settings = Extract<NonNullable<RemoteUpstreamConfig['auth']>, { type: 'client-credentials' }>;

/** A token's life when the token endpoint states none (RFC 6749 §5.1 makes expires_in optional). */
const UNSTATED_LIFE_MS = 3600_000;

/**
 * The gateway's own OAuth 2 identity towards an upstream (client-credentials grant). The token is
 * cached and refreshed refreshSkewMs before it expires (kept at least MIN_LIFE_MS, bearer-source.ts); concurrent callers share one fetch, whose answer
 * is read for at most `withinMs` (the upstream's http.bodyTimeoutMs) in all: see readWithin.
 */
export class ClientCredentials implements BearerSource {
  readonly #s: Settings;
  readonly #dispatcher: Dispatcher;
  readonly #withinMs: number;
  readonly #token: RenewedToken;

  constructor(settings: Settings, dispatcher: Dispatcher, withinMs: number, renewalFailed?: (err: Error) => void) {
    this.#s = settings;
    this.#dispatcher = dispatcher;
    this.#withinMs = withinMs;
    this.#token = new RenewedToken(() => this.#fetch(), { skewMs: settings.refreshSkewMs, renewalFailed });
  }

  /** A token to send; through an outage of the token endpoint, the one held while it has not expired (RenewedToken). */
  token(): Promise<string> {
    return this.#token.token();
  }

  /** The expiry of the cached token, if one is held. */
  get expiresAt(): number | undefined {
    return this.#token.expiresAt;
  }

  /** The upstream refused `refused`: fetch a new one next time, unless it was replaced meanwhile (RenewedToken.invalidate). */
  invalidate(refused: string): void {
    this.#token.invalidate(refused);
  }

  async #fetch(): Promise<IssuedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.#s.scope) form.set('scope', this.#s.scope);
    if (this.#s.audience) form.set('audience', this.#s.audience);
    const basic = Buffer.from(`${encodeURIComponent(this.#s.clientId)}:${encodeURIComponent(this.#s.clientSecret)}`).toString('base64');
    const res = await request(this.#s.tokenUrl, {
      method: 'POST',
      dispatcher: this.#dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
      body: form.toString(),
      onInfo: boundedInformational,
    });
    // A token response is small; anything beyond 64 KiB is not one (and is not held in memory).
    const text = await readWithin(res.body, this.#withinMs).catch((err: Error) => Promise.reject(new Error(`the token endpoint's answer (HTTP ${res.statusCode}): ${err.message}`)));
    if (res.statusCode !== 200) throw new Error(`token endpoint answered HTTP ${res.statusCode}`);
    const doc = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    // As the token exchange and the user-oauth client read theirs: an empty or non-bearer token was sent,
    // and refused by the upstream with 401 on every call while it was cached.
    return { value: bearerTokenOf(doc, (why) => new Error(why)), lifeMs: tokenLifeMs(doc.expires_in, UNSTATED_LIFE_MS) };
  }
}
