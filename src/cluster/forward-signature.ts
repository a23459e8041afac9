import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The header that proves a request was forwarded by another replica of the group. */
export const FORWARD_HEADER = 'x-switchboard-forward';
/** How far a forward's timestamp may be from this replica's clock. */
const SKEW_MS = 30_000;

/** What a signature covers: who forwards, when, and the request (its body by digest). */
export interface SignedRequest {
  method: string;
  url: string;
  session: string | undefined;
  body: string | undefined;
}

/** Why a forward header was not believed. */
export type Untrusted = 'malformed' | 'expired' | 'bad-signature';

/**
 * Signs and verifies forwards between replicas with a shared secret: `v1,<replica>,<unixMs>,<hex
 * HMAC-SHA256 over replica|unixMs|method|url|session|sha256(body)>`. A forward is believed only with a
 * signature made with the group's secret in the last ±30 s, over this very method, path, session and
 * body; anything else is an ordinary client request (never trusted as forwarded).
 */
export class ForwardSignature {
  readonly #secret: Buffer;

  constructor(secret: string) {
    this.#secret = Buffer.from(secret, 'utf8');
  }

  sign(replica: string, r: SignedRequest, now = Date.now()): string {
    return `v1,${replica},${now},${this.#mac(replica, String(now), r).toString('hex')}`;
  }

  /** The forwarding replica when the header is valid for `r`, else why it is not. */
  verify(header: string, r: SignedRequest, now = Date.now()): { replica: string } | { untrusted: Untrusted } {
    const parts = header.split(',');
    if (parts.length !== 4 || parts[0] !== 'v1' || !/^\d{1,15}$/.test(parts[2]!) || !/^[0-9a-f]{64}$/.test(parts[3]!)) return { untrusted: 'malformed' };
    const [, replica, at, mac] = parts as [string, string, string, string];
    if (Math.abs(now - Number(at)) > SKEW_MS) return { untrusted: 'expired' };
    const want = this.#mac(replica, at, r);
    return timingSafeEqual(want, Buffer.from(mac, 'hex')) ? { replica } : { untrusted: 'bad-signature' };
  }

  #mac(replica: string, at: string, r: SignedRequest): Buffer {
    const body = createHash('sha256')
      .update(r.body ?? '')
      .digest('hex');
    return createHmac('sha256', this.#secret).update(`${replica}|${at}|${r.method}|${r.url}|${r.session ?? ''}|${body}`).digest();
  }
}
