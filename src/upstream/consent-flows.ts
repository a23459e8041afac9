import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { userKey, type UpstreamUser } from './upstream-user.js';
import type { VaultStore } from './vault-store.js';

/** A consent link's subject: the principal who was asked and the upstream to link. */
export interface ConsentFlow {
  user: UpstreamUser;
  upstream: string;
  /**
   * When the consent was asked for (ms): a revocation of the user's link made since voids it
   * (CredentialVault.saveConsent). Absent in records an earlier version stored (taken as begun long ago).
   */
  at?: number | undefined;
}

/**
 * An authorization in progress (one OAuth `state`): whose, for which upstream, its PKCE verifier; stage
 * `verify`: the sign-in at the gateway's own identity provider that comes first with vault.verifyUser.
 */
export interface ConsentState extends ConsentFlow {
  verifier: string;
  stage?: 'verify' | undefined;
  /**
   * What the upstream was when the browser was sent to its authorization server (vaultAudience): the
   * consent given there is for that; a reload that changed it before the callback voids the consent.
   * Absent for the gateway's own sign-in (`verify`) and for records an earlier version stored.
   */
  audience?: string | undefined;
  /**
   * `own`: the browser was sent with the upstream's own redirect URI (upstreamRedirectUri), and only an answer
   * there completes it. Absent: the shared /oauth/callback (`callback: shared`, or a record from before 2026-12-07).
   */
  callback?: 'own' | undefined;
}

/** Why a callback's state was refused (each is a different attack or accident; all end the flow). */
export type StateRefusal = 'unknown' | 'other-browser';

const ID_BYTES = 32;
const REF = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

/**
 * The two single-use records of a consent, both kept server side (memory or Redis) with a TTL:
 *
 * - the flow: made when a call finds no token for its user; its reference, HMAC-signed with a key
 *   derived from the vault key, is the `flow` of the /oauth/start URL the user is sent to. The URL
 *   reaches only that principal (in the answer to its own authenticated call); it works once. Opening it
 *   shows a confirmation page (the flow read, not taken); only that page's POST takes it (confirmation).
 * - the state: made by /oauth/start from the flow, 32 random bytes, sent to the authorization server
 *   and expected back at /oauth/callback exactly once, from the browser that started it (a cookie holds
 *   a second random value whose hash the state record keeps). The principal comes from the record,
 *   never from the callback's request, so no one can complete another's flow or plant their own.
 */
export class ConsentFlows {
  readonly #mac: Buffer;
  readonly #confirmKey: Buffer;
  readonly #verifierKey: Buffer;
  readonly #store: VaultStore;
  readonly #ttlMs: number;

  constructor(vaultKey: Buffer, store: VaultStore, ttlMs: number) {
    this.#mac = Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), 'switchboard vault v1: consent flow', 32));
    this.#confirmKey = Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), 'switchboard vault v1: consent confirmation', 32));
    this.#verifierKey = Buffer.from(hkdfSync('sha256', vaultKey, Buffer.alloc(0), 'switchboard vault v1: pkce verifier', 32));
    this.#store = store;
    this.#ttlMs = ttlMs;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  async create(user: UpstreamUser, upstream: string): Promise<string> {
    const id = randomBytes(ID_BYTES).toString('base64url');
    const flow: ConsentFlow = { user: { issuer: user.issuer, subject: user.subject, tenant: user.tenant }, upstream, at: Date.now() };
    await this.#store.putOnce('flow', id, JSON.stringify(flow), this.#ttlMs, userKey(flow.user));
    return `${id}.${this.#sign(id)}`;
  }

  /** The flow a reference names, once; undefined when forged, expired or used. */
  async take(ref: string): Promise<ConsentFlow | undefined> {
    const id = this.#verified(ref);
    const v = id === undefined ? undefined : await this.#store.takeOnce('flow', id);
    return v === undefined ? undefined : (JSON.parse(v) as ConsentFlow);
  }

  /** The flow a reference names, left in place (the confirmation page shows it); undefined when forged, expired or used. */
  async peek(ref: string): Promise<ConsentFlow | undefined> {
    const id = this.#verified(ref);
    const v = id === undefined ? undefined : await this.#store.peekOnce('flow', id);
    return v === undefined ? undefined : (JSON.parse(v) as ConsentFlow);
  }

  /**
   * What the confirmation page of a flow hands the browser: a random value for a cookie of its own and,
   * for the page's form, a MAC over the flow and that value. Only a POST that brings both, from the
   * browser that was shown the page, continues the flow (see confirmed): a link alone, a prefetch or a
   * form another site makes (it can read neither the cookie nor this page) cannot.
   */
  confirmation(ref: string): { browser: string; form: string } {
    const browser = randomBytes(ID_BYTES).toString('base64url');
    return { browser, form: this.#confirmMac(ref, browser) };
  }

  confirmed(ref: string, browser: string | undefined, form: string | undefined): boolean {
    if (!browser || !form || this.#verified(ref) === undefined) return false;
    const expected = Buffer.from(this.#confirmMac(ref, browser));
    const given = Buffer.from(form);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  /** The flow id of a reference whose signature holds. */
  #verified(ref: string): string | undefined {
    const m = REF.exec(ref);
    if (!m) return undefined;
    const expected = Buffer.from(this.#sign(m[1]!));
    const given = Buffer.from(m[2]!);
    return expected.length === given.length && timingSafeEqual(expected, given) ? m[1]! : undefined;
  }

  #confirmMac(ref: string, browser: string): string {
    return createHmac('sha256', this.#confirmKey).update(`${ref}\n${browser}`).digest('base64url');
  }

  /**
   * A state for the flow and the browser's binding (set as a cookie). The PKCE verifier is the state's MAC
   * under a key derived from the vault key, made again at the callback: never stored, so one who reads the
   * store (Redis) and sees an authorization code cannot redeem it.
   */
  async begin(flow: ConsentFlow, stage?: 'verify', audience?: string, callback?: 'own'): Promise<{ state: string; browser: string; challenge: string }> {
    const state = randomBytes(ID_BYTES).toString('base64url');
    const browser = randomBytes(ID_BYTES).toString('base64url');
    const verifier = this.#verifier(state);
    const record = { user: flow.user, upstream: flow.upstream, at: flow.at, browser: hash(browser), ...(stage ? { stage } : {}), ...(audience !== undefined ? { audience } : {}), ...(callback ? { callback } : {}) };
    await this.#store.putOnce('state', state, JSON.stringify(record), this.#ttlMs, userKey(flow.user));
    return { state, browser, challenge: createHash('sha256').update(verifier).digest('base64url') };
  }

  /** The state's record, once, if the same browser brings it back; else why not. */
  async complete(state: string, browser: string | undefined): Promise<ConsentState | StateRefusal> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(state)) return 'unknown';
    const v = await this.#store.takeOnce('state', state);
    if (v === undefined) return 'unknown';
    const r = JSON.parse(v) as Partial<ConsentState> & ConsentFlow & { browser: string };
    const given = Buffer.from(hash(browser ?? ''));
    if (browser === undefined || !timingSafeEqual(given, Buffer.from(r.browser))) return 'other-browser';
    // A record an earlier version stored (it kept the verifier) completes as it began.
    return { user: r.user, upstream: r.upstream, at: r.at, verifier: r.verifier ?? this.#verifier(state), stage: r.stage, audience: r.audience, callback: r.callback };
  }

  /** 32 bytes as base64url: 43 characters, what RFC 7636 §4.1 asks of a verifier. */
  #verifier(state: string): string {
    return createHmac('sha256', this.#verifierKey).update(state).digest('base64url');
  }

  #sign(id: string): string {
    return createHmac('sha256', this.#mac).update(id).digest('base64url');
  }

  toJSON(): Record<string, number> {
    return { ttlMs: this.#ttlMs };
  }
}

function hash(s: string): string {
  return createHash('sha256').update(s).digest('base64url');
}
