import { invalidClientAnswer } from '../jsonrpc/client-answer.js';
import type { Exchange } from './exchange.js';

const sameRoots = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * A standing's roots, for its per-session 2025 upstreams that cache them. Such a server asks roots/list when
 * told notifications/initialized (a warm spare, before any client owns it: refused) and at each
 * notifications/roots/list_changed, never during a call, so a 2026-07-28 client (which has neither message,
 * and answers roots only in a call's input round) never got its roots to it. A 2025 session tells its
 * instances list_changed once initialized; a standing does when its first call that declares roots runs,
 * and the ask that follows is that call's round. Roots the client gives in any round are kept: an ask
 * that no call carries (the refresh after a list_changed) is answered with them, and when they change the
 * instances are told list_changed, so a cache follows the client.
 */
export class StandingRoots {
  /** The ListRootsResult the client last gave, and the call it gave it in. */
  #roots: Record<string, unknown> | undefined;
  #from: Exchange | undefined;
  /** The call the instances were first told list_changed for: their ask goes in its round. */
  #prompted: Exchange | undefined;
  /** The client's answer a call's round waits for, and that call: another ask in it meanwhile shares it. */
  #asking: { exchange: Exchange; answer: Promise<Record<string, unknown>> } | undefined;
  /** Tells the standing's per-session instances notifications/roots/list_changed. */
  readonly #tell: () => void;

  constructor(tell: () => void) {
    this.#tell = tell;
  }

  /**
   * A call starts: the first one that declares roots and may ask (tools/call, prompts/get, resources/read)
   * prompts the ask. So does the next such call while the client has given none: a prompted call that
   * ended with the ask unanswered (no retry came, the client left) left the server with none, for good.
   */
  starting(exchange: Exchange): void {
    if ((this.#prompted !== undefined && (this.#roots !== undefined || !this.#prompted.over)) || !exchange.first.spec.mrtr || exchange.first.capabilities.roots === undefined) return;
    this.#prompted = exchange;
    this.#tell();
  }

  /**
   * The answer to an upstream's roots/list asked in `exchange` (undefined: in no call) that needs no
   * client: the kept roots, outside any call or in the call that gave them (its server asks again once
   * told they changed). Undefined: put it to the client.
   */
  known(exchange: Exchange | undefined): Record<string, unknown> | undefined {
    return exchange === undefined || exchange === this.#from ? this.#roots : undefined;
  }

  /** The call a roots/list no call carries goes to: the prompted one, while it lasts (the gateway's own list_changed made it ask). */
  carrier(): Exchange | undefined {
    return this.#prompted !== undefined && !this.#prompted.over ? this.#prompted : undefined;
  }

  /**
   * A roots/list put to the client in `exchange` (`put`), its answer kept (given). One already waiting there
   * is shared: a server started for the standing asks when told notifications/initialized and again when
   * the first call's list_changed reaches it, and the round put the same question to the client twice.
   */
  ask(exchange: Exchange, put: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
    if (this.#asking?.exchange === exchange) return this.#asking.answer;
    const asking = { exchange, answer: put().then((r) => this.given(r, exchange)) };
    this.#asking = asking;
    const done = () => void (this.#asking === asking && (this.#asking = undefined));
    asking.answer.then(done, done);
    return asking.answer;
  }

  /** The client answered a roots/list in `exchange`: kept (a valid one), and the instances told when they changed. */
  given(result: Record<string, unknown>, exchange: Exchange): Record<string, unknown> {
    if (invalidClientAnswer('roots/list', result)) return result;
    const changed = this.#roots !== undefined && !sameRoots(this.#roots.roots, result.roots);
    this.#roots = result;
    this.#from = exchange;
    if (changed) this.#tell();
    return result;
  }
}
