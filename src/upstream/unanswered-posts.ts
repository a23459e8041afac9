import { isResponse, type JsonRpcMessage } from '../jsonrpc/types.js';
import { TransportError } from '../transport/transport.js';

/**
 * How long a session the upstream forgot waits, at most, for its POSTs still unanswered before it closes. Each
 * refused for the session (404, or the 400 some servers send) was not taken, and fails as never sent, to be sent
 * again on the new session; one the upstream took may still bring its answer meanwhile.
 */
export const UNANSWERED_GRACE_MS = 1000;

/**
 * How many of the gateway's answers to the upstream's own requests (a ping's, a sampling's) may wait for their
 * POST's answer at once: 4 × MAX_ASKING, pings besides. Each is a POST, sent as the request comes: an upstream
 * that asked without end (pings as fast as its stream took them) and let the POSTs wait had every answer queued
 * behind http.maxConnections, held in memory, as many as it asked. Past the bound an answer is not sent (the
 * upstream's request goes unanswered, as a flood's may), and that is warned of once while it lasts.
 */
export const MAX_UNTAKEN_ANSWERS = 128;

/**
 * The POSTs of one remote session whose answer has not yet said whether the upstream took them (no headers yet,
 * or a 400 whose body tells), queued behind the pool's connections included. When the upstream forgets the
 * session, several calls sent at once are all refused with it; closing at the first refusal failed the rest with
 * the close, as if they might have run, and they were lost. Counters, not a set: nothing is allocated per POST.
 * `flooded`: past MAX_UNTAKEN_ANSWERS, once until the answers waiting are back under it.
 */
export class UnansweredPosts {
  #count = 0;
  #answers = 0;
  #flooding = false;
  #none: (() => void) | undefined;
  readonly #flooded: (() => void) | undefined;

  constructor(flooded?: () => void) {
    this.#flooded = flooded;
  }

  /** A POST of `message` begins; an answer past MAX_UNTAKEN_ANSWERS throws (backlogged), not counted: it is not sent. */
  begin(message: JsonRpcMessage): void {
    if (isResponse(message)) {
      if (this.#answers >= MAX_UNTAKEN_ANSWERS) throw this.#refused();
      this.#answers++;
    }
    this.#count++;
  }

  /** The POST's answer has said (or it failed): once none is left, a wait in `settled` ends. */
  end(message: JsonRpcMessage): void {
    if (isResponse(message) && --this.#answers < MAX_UNTAKEN_ANSWERS / 2) this.#flooding = false;
    if (--this.#count === 0) this.#none?.();
  }

  #refused(): TransportError {
    if (!this.#flooding) this.#flooded?.();
    this.#flooding = true;
    return new TransportError('backlogged', `${MAX_UNTAKEN_ANSWERS} of the gateway's answers to the upstream's requests wait for it to take them: this one was not sent`);
  }

  /** Resolves once no POST is unanswered, or after `ms`, whichever is first. */
  async settled(ms: number): Promise<void> {
    if (this.#count === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#none = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.#none = undefined;
  }
}
