import type { EndpointChange } from './endpoint-change.js';

/** How many distinct changes may wait on Redis at once; a further one is dropped (the bus is best effort). */
const MAX_PENDING = 256;

/** One change on its way to Redis, and whether the same change was announced again meanwhile. */
interface Pending {
  text: string;
  again: boolean;
}

/**
 * The change bus's sending side, coalesced: a change (endpoint, method, upstream, params) already on its way to
 * Redis stands for the same change announced meanwhile, which is published once more after it, so the
 * last announcement always goes out. A list_changed or a resources/updated says "look again", so one
 * after the burst says all the burst said. Without it an upstream announcing one resource's update
 * thousands of times (a file watcher, a hostile server) cost one PUBLISH each, heard by every replica,
 * each held in ioredis's command queue while Redis was slow or frozen. Distinct changes in flight are
 * bounded (MAX_PENDING); past it they are dropped, as a change is while Redis is away.
 */
export class ChangePublisher {
  readonly #send: (text: string) => Promise<unknown>;
  readonly #failed: (err: Error) => void;
  readonly #dropped: () => void;
  readonly #pending = new Map<string, Pending>();

  constructor(send: (text: string) => Promise<unknown>, failed: (err: Error) => void, dropped: () => void) {
    this.#send = send;
    this.#failed = failed;
    this.#dropped = dropped;
  }

  publish(change: EndpointChange, text: string): void {
    // The upstream too: one's change must not stand for another's, which a tenant may hear where it hears none of the first's.
    const key = `${change.endpoint}\n${change.method}\n${change.upstream ?? ''}\n${JSON.stringify(change.params ?? null)}`;
    const waiting = this.#pending.get(key);
    if (waiting) {
      waiting.again = true;
      return;
    }
    if (this.#pending.size >= MAX_PENDING) return this.#dropped();
    const entry = { text, again: false };
    this.#pending.set(key, entry);
    this.#go(key, entry);
  }

  #go(key: string, entry: Pending): void {
    this.#send(entry.text)
      .catch(this.#failed)
      .finally(() => {
        if (!entry.again) return void this.#pending.delete(key);
        entry.again = false;
        this.#go(key, entry);
      });
  }
}
