import { LOG_LEVELS } from '../jsonrpc/modern-meta.js';

/**
 * The log level a standing's 2025 upstreams are set to. A 2026-07-28 request names its level in `_meta`;
 * a 2025 upstream knows only logging/setLevel, and until told sends what it chooses (often warnings and
 * worse): filtering at the gateway alone, a request asking for debug got no debug message. The first
 * request naming a level, and each naming a less severe one than any before, sets the upstreams to it
 * (the router sets a shared instance to debug, see sharedLevel); never back up, since requests of several
 * levels may run at once: each still gets only what its own level lets through (ModernSession.clientNotify).
 */
export class StandingLogLevel {
  /** The least severe level set upstream (its rank in LOG_LEVELS; their length: none yet). */
  #set = LOG_LEVELS.length;
  /** How many setLevels of each rank are on their way: one asks no more of a request at its level or above. */
  readonly #pending = new Array<number>(LOG_LEVELS.length).fill(0);
  #setting: Promise<void> | undefined;
  readonly #send: (level: string) => Promise<unknown>;

  constructor(send: (level: string) => Promise<unknown>) {
    this.#send = send;
  }

  /** The least severe level set or on its way: a request at it or above has nothing to set. */
  get #least(): number {
    const pending = this.#pending.findIndex((n) => n > 0);
    return pending >= 0 && pending < this.#set ? pending : this.#set;
  }

  /**
   * What a request naming `level` waits for before it goes upstream, so that its own messages are let
   * through: the setLevel it makes, or one still on its way. Undefined (most requests) when there is
   * nothing to wait for. A setLevel that fails is not the request's failure: it goes on regardless, and
   * the level is not counted as set, so the next request naming it tries again (remembered, the upstream
   * stayed at its default until a restart or a reload).
   */
  before(level: string | undefined): Promise<void> | undefined {
    if (level === undefined) return undefined;
    const rank = LOG_LEVELS.indexOf(level);
    if (rank < 0 || rank >= this.#least) return this.#setting;
    this.#pending[rank]!++;
    const setting = this.#send(level).then(
      () => void (this.#set = Math.min(this.#set, rank)),
      () => {},
    );
    this.#setting = setting;
    void setting.then(() => {
      this.#pending[rank]!--;
      if (this.#setting === setting) this.#setting = undefined;
    });
    return setting;
  }
}
