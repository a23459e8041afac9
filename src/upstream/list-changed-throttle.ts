import { listChangedNotifications } from '../jsonrpc/methods.js';

/** List_changed of one kind passed on as they come (a restarting server sends five or six), then one a second. */
const BURST = 10;
const PER_SECOND = 1;

const LIST_CHANGED = new Set(listChangedNotifications());

interface Kind {
  tokens: number;
  refilledAt: number;
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
    if (!kind) this.#kinds.set(method, (kind = { tokens: BURST, refilledAt: this.#now(), held: false }));
    if (kind.held) return true;
    this.#refill(kind);
    if (kind.tokens >= 1) {
      kind.tokens--;
      this.#pass(method);
      return true;
    }
    kind.held = true;
    const wait = Math.ceil(((1 - kind.tokens) * 1000) / PER_SECOND);
    setTimeout(() => {
      kind.held = false;
      this.#refill(kind);
      kind.tokens = Math.max(0, kind.tokens - 1);
      this.#pass(method);
    }, wait).unref();
    return true;
  }

  #refill(kind: Kind): void {
    const now = this.#now();
    kind.tokens = Math.min(BURST, kind.tokens + ((now - kind.refilledAt) * PER_SECOND) / 1000);
    kind.refilledAt = now;
  }
}
