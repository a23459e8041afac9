import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SeenForwards } from './seen-forwards.js';

/** The header that proves a request was forwarded by another replica of the group. */
export const FORWARD_HEADER = 'x-switchboard-forward';
/** Where the group's secret is kept in Redis without store.redis.forwardSecret: as long as the store's marker (see Heartbeat). */
export const forwardSecretKey = (prefix: string): string => `${prefix}forward-secret`;
/** How far a forward's timestamp may be from this replica's clock. */
const SKEW_MS = 30_000;
/** How far a signature's time may run ahead of the clock for repeats signed in one millisecond (see sign). */
const REWIND_MS = 1_000;

/** What a signature covers: who forwards, when, and the request (its body by digest). */
export interface SignedRequest {
  method: string;
  url: string;
  session: string | undefined;
  body: string | undefined;
}

/**
 * Why a forward header was not believed. 'replayed': its signature was believed here before (see
 * SeenForwards); 'replay-memory-full': it verified, but this replica remembers as many as it may.
 */
export type Untrusted = 'malformed' | 'expired' | 'bad-signature' | 'misdirected' | 'replayed' | 'replay-memory-full';

/**
 * Signs and verifies forwards between replicas with a shared secret: `v1,<from>,<to>,<unixMs>,<hex
 * HMAC-SHA256 over from|to|unixMs|method|url|session|sha256(body)>`. A forward is believed only with a
 * signature made with the group's secret in the last ±30 s, for this replica, over this very method,
 * path, session and body, and once: whoever sees a forward pass between replicas must not be able to
 * send it again (see SeenForwards); anything else is an ordinary client request (never trusted as
 * forwarded). The target is signed so that an advertised address that leads to another replica (a
 * reused pod IP) does not make that one believe it.
 */
export class ForwardSignature {
  readonly #secret: Buffer;
  readonly #seen: SeenForwards;
  /** The time of the last signature, and the MACs signed at it (see sign). */
  #signedAt = 0;
  readonly #signedMacs = new Set<string>();

  /** `seen`: the memory of believed forwards, kept across a change of secret (a secret may come back). */
  constructor(secret: string, seen = new SeenForwards()) {
    this.#secret = Buffer.from(secret, 'utf8');
    this.#seen = seen;
  }

  /**
   * A new header for each call, even for the same request to the same replica in the same millisecond
   * (a client's two identical GETs): that one is believed once, so the second is signed a millisecond on.
   */
  sign(from: string, to: string, r: SignedRequest, now = Date.now()): string {
    // Behind the last signature's time (moved on by repeats): signed at that, where the repeats are known.
    // Only a clock set back by more than REWIND_MS starts again from it.
    let at = now < this.#signedAt && this.#signedAt - now < REWIND_MS ? this.#signedAt : now;
    let mac = this.#mac(from, to, String(at), r).toString('hex');
    if (at === this.#signedAt && this.#signedMacs.has(mac)) mac = this.#mac(from, to, String(++at), r).toString('hex');
    if (at !== this.#signedAt) {
      this.#signedAt = at;
      this.#signedMacs.clear();
    }
    this.#signedMacs.add(mac);
    return `v1,${from},${to},${at},${mac}`;
  }

  /** The forwarding replica when the header is valid for `r` sent to replica `me`, else why it is not. */
  verify(header: string, me: string, r: SignedRequest, now = Date.now()): { replica: string } | { untrusted: Untrusted } {
    const parts = header.split(',');
    if (parts.length !== 5 || parts[0] !== 'v1' || !/^\d{1,15}$/.test(parts[3]!) || !/^[0-9a-f]{64}$/.test(parts[4]!)) return { untrusted: 'malformed' };
    const [, from, to, at, mac] = parts as [string, string, string, string, string];
    if (Math.abs(now - Number(at)) > SKEW_MS) return { untrusted: 'expired' };
    if (!timingSafeEqual(this.#mac(from, to, at, r), Buffer.from(mac, 'hex'))) return { untrusted: 'bad-signature' };
    if (to !== me) return { untrusted: 'misdirected' };
    const seen = this.#seen.first(mac, Number(at) + SKEW_MS, now);
    if (seen === 'first') return { replica: from };
    return { untrusted: seen === 'replayed' ? 'replayed' : 'replay-memory-full' };
  }

  /**
   * A MAC over the address `replica` advertises for forwards, so that one planted in Redis (a made-up
   * replica whose heartbeat names any host) is not where a client's request and its credentials go.
   */
  advert(replica: string, url: string): string {
    return this.#advertMac(replica, url).toString('hex');
  }

  advertOk(replica: string, url: string, mac: string): boolean {
    return /^[0-9a-f]{64}$/.test(mac) && timingSafeEqual(this.#advertMac(replica, url), Buffer.from(mac, 'hex'));
  }

  #advertMac(replica: string, url: string): Buffer {
    return createHmac('sha256', this.#secret).update(`advert|${replica}|${url}`).digest();
  }

  #mac(from: string, to: string, at: string, r: SignedRequest): Buffer {
    const body = createHash('sha256')
      .update(r.body ?? '')
      .digest('hex');
    return createHmac('sha256', this.#secret).update(`${from}|${to}|${at}|${r.method}|${r.url}|${r.session ?? ''}|${body}`).digest();
  }
}
