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
  #least = LOG_LEVELS.length;
  #setting: Promise<void> | undefined;
  readonly #set: (level: string) => Promise<unknown>;

  constructor(set: (level: string) => Promise<unknown>) {
    this.#set = set;
  }

  /**
   * What a request naming `level` waits for before it goes upstream, so that its own messages are let
   * through: the setLevel it makes, or one still on its way. Undefined (most requests) when there is
   * nothing to wait for. A setLevel that fails is not the request's failure: it goes on regardless.
   */
  before(level: string | undefined): Promise<void> | undefined {
    if (level === undefined) return undefined;
    const rank = LOG_LEVELS.indexOf(level);
    if (rank < 0 || rank >= this.#least) return this.#setting;
    this.#least = rank;
    const setting = this.#set(level).then(
      () => {},
      () => {},
    );
    this.#setting = setting;
    void setting.then(() => {
      if (this.#setting === setting) this.#setting = undefined;
    });
    return setting;
  }
}
