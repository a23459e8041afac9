import { request, type Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { renewAt, type BearerSource } from './bearer-source.js';
import { readWithin } from './read-body.js';

type Settings = Extract<NonNullable<RemoteUpstreamConfig['auth']>, { type: 'client-credentials' }>;

/** A token's life when the token endpoint states none (RFC 6749 §5.1 makes expires_in optional). */
const UNSTATED_LIFE_MS = 3600_000;
/**
 * The shortest life a token is kept for (renewed after half of it: at most one fetch per 15 s). An
 * expires_in of 0 or below, unreadable, or a fraction of a second made the token be fetched again for
 * every request to the upstream; one that is really expired is refused by the upstream, and a 401
 * fetches a new one at once (invalidate).
 */
const MIN_LIFE_MS = 30_000;

/** expires_in (seconds, a number or a numeric string as some servers send it) as a life in ms. */
function tokenLifeMs(expiresIn: unknown): number {
  if (expiresIn === undefined || expiresIn === null) return UNSTATED_LIFE_MS;
  const sec = typeof expiresIn === 'string' && expiresIn.trim() !== '' ? Number(expiresIn) : expiresIn;
  return typeof sec === 'number' && Number.isFinite(sec) ? Math.max(sec * 1000, MIN_LIFE_MS) : MIN_LIFE_MS;
}

/**
 * The gateway's own OAuth 2 identity towards an upstream (client-credentials grant). The token is
 * cached and refreshed refreshSkewMs before it expires (kept at least MIN_LIFE_MS); concurrent callers share one fetch, whose answer
 * is read for at most `withinMs` (the upstream's http.bodyTimeoutMs) in all: see readWithin.
 */
export class ClientCredentials implements BearerSource {
  readonly #s: Settings;
  readonly #dispatcher: Dispatcher;
  readonly #withinMs: number;
  #token: { value: string; expiresAt: number; renewAt: number } | undefined;
  #inflight: Promise<string> | undefined;

  constructor(settings: Settings, dispatcher: Dispatcher, withinMs: number) {
    this.#s = settings;
    this.#dispatcher = dispatcher;
    this.#withinMs = withinMs;
  }

  async token(): Promise<string> {
    if (this.#token && Date.now() < this.#token.renewAt) return this.#token.value;
    this.#inflight ??= this.#fetch().finally(() => (this.#inflight = undefined));
    return this.#inflight;
  }

  /** The expiry of the cached token, if one is held. */
  get expiresAt(): number | undefined {
    return this.#token?.expiresAt;
  }

  /** The upstream refused the token: fetch a new one next time. */
  invalidate(): void {
    this.#token = undefined;
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
    if (typeof doc.access_token !== 'string') throw new Error('token endpoint sent no access_token');
    const ttl = tokenLifeMs(doc.expires_in);
    const now = Date.now();
    this.#token = { value: doc.access_token, expiresAt: now + ttl, renewAt: renewAt(now, ttl, this.#s.refreshSkewMs) };
    return doc.access_token;
  }
}
