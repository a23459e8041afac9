/**
 * When a session was last used, and the HTTP streams that keep it open: what its idle timeout counts
 * from. The clock restarts when the client does something and when it stops being busy (its last
 * request answered, a stream closed), so a session that was busy for an hour is not swept the moment
 * it goes quiet, and a client that vanished without DELETE frees its slot one idle timeout after.
 */
export class SessionActivity {
  #openedAt = Date.now();
  #last = this.#openedAt;
  #streams = 0;
  readonly #onTouched: () => void;

  /** `onTouched`: told on every touch (the session's slot expires later now). */
  constructor(onTouched: () => void) {
    this.#onTouched = onTouched;
  }

  /** Epoch ms of when the session opened: on its first replica, for one taken over (see openedSince). */
  get openedAt(): number {
    return this.#openedAt;
  }

  /** A session taken over opened when its record says, not when this replica rebuilt it. */
  openedSince(at: number): void {
    if (Number.isFinite(at)) this.#openedAt = at;
  }

  /** Epoch ms of the last use. */
  get last(): number {
    return this.#last;
  }

  /** Open HTTP streams; a session with a live stream is not idle. */
  get streams(): number {
    return this.#streams;
  }

  touch(): void {
    this.#last = Date.now();
    this.#onTouched();
  }

  streamOpened(): void {
    this.#streams++;
  }

  streamClosed(): void {
    this.#streams--;
    this.touch();
  }
}
