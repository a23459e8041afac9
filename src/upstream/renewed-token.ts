import { renewAt } from './bearer-source.js';

/** After a failed renewal, how long the token held (still valid) is used before the next try. */
const RENEW_RETRY_MS = 5000;

/** What a token endpoint gave: the token and its life in ms (tokenLifeMs). */
export interface IssuedToken {
  value: string;
  lifeMs: number;
}

export interface RenewalOptions {
  /** Renewed this long before it expires (never earlier than half its life: renewAt). */
  skewMs: number;
  /** Whether a failed renewal may be outlived by the token held; every failure when absent. */
  outlives?: (err: unknown) => boolean;
  /** Hears of a renewal that failed while the token held was still used: nothing else would say so until it expired. */
  renewalFailed?: ((err: Error) => void) | undefined;
}

/**
 * A bearer token got from a token endpoint (`issue`), cached and renewed `skewMs` before it expires;
 * concurrent callers share one renewal. When none can be had (the endpoint down, failing), the one held is
 * used while it has not expired, tried again RENEW_RETRY_MS later: an outage in the skew's window failed
 * every call, the token still good. A token the upstream refused (invalidate) is not held: never used again.
 * The client-credentials grant and the token exchange keep their tokens so, each issuing in its own terms.
 */
export class RenewedToken {
  readonly #issue: () => Promise<IssuedToken>;
  readonly #o: RenewalOptions;
  #held: { value: string; expiresAt: number; renewAt: number } | undefined;
  #inflight: Promise<string> | undefined;
  /** Counts drop(): a renewal started before one is not kept. */
  #generation = 0;

  constructor(issue: () => Promise<IssuedToken>, options: RenewalOptions) {
    this.#issue = issue;
    this.#o = options;
  }

  async token(): Promise<string> {
    if (this.#held && Date.now() < this.#held.renewAt) return this.#held.value;
    if (this.#inflight) return this.#inflight;
    const inflight = this.#renew().finally(() => {
      if (this.#inflight === inflight) this.#inflight = undefined;
    });
    return (this.#inflight = inflight);
  }

  /**
   * What the token held was issued for no longer stands (the token exchange's subject token changed): the
   * next token() issues anew, and a renewal in flight is neither shared with later callers nor kept.
   */
  drop(): void {
    this.#held = undefined;
    this.#inflight = undefined;
    this.#generation++;
  }

  /** The expiry of the token held, if one is. */
  get expiresAt(): number | undefined {
    return this.#held?.expiresAt;
  }

  /**
   * The upstream refused `refused`: a new one next time, unless it was replaced meanwhile. Every call in
   * flight with the refused token gets its own 401, and each discarded the token the first one's retry had
   * just got: one token request per call in flight, and the retries sent refused tokens.
   */
  invalidate(refused: string): void {
    if (this.#held?.value === refused) this.#held = undefined;
  }

  async #renew(): Promise<string> {
    const generation = this.#generation;
    let issued: IssuedToken;
    try {
      issued = await this.#issue();
    } catch (err) {
      const held = this.#held;
      const now = Date.now();
      if (!held || now >= held.expiresAt || (this.#o.outlives && !this.#o.outlives(err))) throw err;
      held.renewAt = Math.min(held.expiresAt, now + RENEW_RETRY_MS);
      this.#o.renewalFailed?.(err as Error);
      return held.value;
    }
    if (generation !== this.#generation) return issued.value;
    const now = Date.now();
    this.#held = { value: issued.value, expiresAt: now + issued.lifeMs, renewAt: renewAt(now, issued.lifeMs, this.#o.skewMs) };
    return issued.value;
  }
}
