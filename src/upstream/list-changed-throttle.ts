import { listChangedNotifications } from '../jsonrpc/methods.js';
import { TokenBucket } from '../observability/token-bucket.js';

/** List_changed of one kind passed on as they come (a restarting server sends five or six), then one a second. */
const BURST = 10;
const PER_SECOND = 1;

const LIST_CHANGED = new Set(listChangedNotifications());

interface Kind {
  bucket: TokenBucket;
  /** One came over the rate: it goes when the rate allows (a timer is set for it). */
  held: boolean;
}

/**
 * An upstream's notifications/<kind>/list_changed, passed on at a bounded rate per kind: a burst as it
 * comes, then one a second, those over the rate folded into one that goes when the rate allows, so the
 * last change is always told. Each says only "list again", so one stands for any number. Passed on one by
 * one, a server writing nothing else (some 60 bytes each, as fast as its pipe takes them) had each handed
 * to every session the instance serves and, with replicas, published in Redis to every other replica.
 */
export class ListChangedThrottle {
  readonly #pass: (method: string) => void;
  readonly #now: () => number;
  readonly #kinds = new Map<string, Kind>();

  constructor(pass: (method: string) => void, now: () => number = Date.now) {
    this.#pass = pass;
    this.#now = now;
  }

  /** Takes a list_changed (passed on now or later) and says so; anything else is the caller's to pass on. */
  offer(method: string): boolean {
    if (!LIST_CHANGED.has(method)) return false;
    let kind = this.#kinds.get(method);
    if (!kind) this.#kinds.set(method, (kind = { bucket: new TokenBucket(PER_SECOND, BURST, this.#now), held: false }));
    if (kind.held) return true;
    const wait = kind.bucket.msUntilOne();
    if (wait === 0) {
      kind.bucket.take();
      this.#pass(method);
      return true;
    }
    kind.held = true;
    setTimeout(() => {
      kind.held = false;
      kind.bucket.spend();
      this.#pass(method);
    }, wait).unref();
    return true;
  }
}
