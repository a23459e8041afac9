import { request, type Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { bearerTokenOf, renewAt, tokenLifeMs, type BearerSource } from './bearer-source.js';
import { readWithin } from './read-body.js';

type Settings = Extract<NonNullable<RemoteUpstreamConfig['auth']>, { type: 'client-credentials' }>;

/** A token's life when the token endpoint states none (RFC 6749 §5.1 makes expires_in optional). */
const UNSTATED_LIFE_MS = 3600_000;
/** After a failed renewal, how long the token held (still valid) is used before the next try. */
const RENEW_RETRY_MS = 5000;

/**
 * The gateway's own OAuth 2 identity towards an upstream (client-credentials grant). The token is
 * cached and refreshed refreshSkewMs before it expires (kept at least MIN_LIFE_MS, bearer-source.ts); concurrent callers share one fetch, whose answer
 * is read for at most `withinMs` (the upstream's http.bodyTimeoutMs) in all: see readWithin.
 */
export class ClientCredentials implements BearerSource {
  readonly #s: Settings;
  readonly #dispatcher: Dispatcher;
  readonly #withinMs: number;
  /** Hears of a renewal that failed while the token held was still used: nothing else would say so until it expired. */
  readonly #renewalFailed: ((err: Error) => void) | undefined;
  #token: { value: string; expiresAt: number; renewAt: number } | undefined;
  #inflight: Promise<string> | undefined;

  constructor(settings: Settings, dispatcher: Dispatcher, withinMs: number, renewalFailed?: (err: Error) => void) {
    this.#s = settings;
    this.#dispatcher = dispatcher;
    this.#withinMs = withinMs;
    this.#renewalFailed = renewalFailed;
  }

  async token(): Promise<string> {
    if (this.#token && Date.now() < this.#token.renewAt) return this.#token.value;
    this.#inflight ??= this.#renew().finally(() => (this.#inflight = undefined));
    return this.#inflight;
  }

  /**
   * A new token; when none can be had (the token endpoint down, failing), the one held while it has not
   * expired, tried again RENEW_RETRY_MS later. Renewal starts refreshSkewMs before expiry: an outage then
   * failed every call for up to that long, the token still good (user-oauth keeps a valid token so too).
   * A token the upstream refused (invalidate) is not held: that one is never used again.
   */
  async #renew(): Promise<string> {
    try {
      return await this.#fetch();
    } catch (err) {
      const held = this.#token;
      const now = Date.now();
      if (!held || now >= held.expiresAt) throw err;
      held.renewAt = Math.min(held.expiresAt, now + RENEW_RETRY_MS);
      this.#renewalFailed?.(err as Error);
      return held.value;
    }
  }

  /** The expiry of the cached token, if one is held. */
  get expiresAt(): number | undefined {
    return this.#token?.expiresAt;
  }

  /**
   * The upstream refused `refused`: fetch a new one next time, unless it was replaced meanwhile. Every
   * call in flight with the refused token gets its own 401, and each discarded the token the first one's
   * retry had just fetched: one token request per call in flight, and the retries sent refused tokens.
   */
  invalidate(refused: string): void {
    if (this.#token?.value === refused) this.#token = undefined;
  }

  async #fetch(): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.#s.scope) form.set('scope', this.#s.scope);
    if (this.#s.audience) form.set('audience', this.#s.audience);
    const basic = Buffer.from(`${encodeURIComponent(this.#s.clientId)}:${encodeURIComponent(this.#s.clientSecret)}`).toString('base64');
    const res = await request(this.#s.tokenUrl, {
      method: 'POST',
      dispatcher: this.#dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
      body: form.toString(),
    });
    // A token response is small; anything beyond 64 KiB is not one (and is not held in memory).
    const text = await readWithin(res.body, this.#withinMs).catch((err: Error) => Promise.reject(new Error(`the token endpoint's answer (HTTP ${res.statusCode}): ${err.message}`)));
    if (res.statusCode !== 200) throw new Error(`token endpoint answered HTTP ${res.statusCode}`);
    const doc = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    // As the token exchange and the user-oauth client read theirs: an empty or non-bearer token was sent,
    // and refused by the upstream with 401 on every call while it was cached.
    const value = bearerTokenOf(doc, (why) => new Error(why));
    const ttl = tokenLifeMs(doc.expires_in, UNSTATED_LIFE_MS);
    const now = Date.now();
    this.#token = { value, expiresAt: now + ttl, renewAt: renewAt(now, ttl, this.#s.refreshSkewMs) };
    return value;
  }
}
