import type { Principal } from '../auth/principal.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Exchange } from './exchange.js';

function principalKey(p: Principal): string {
  return JSON.stringify([p.issuer, p.subject, p.tenant]);
}

/**
 * The exchanges each principal has sent a round of, oldest round first, so that at most `cap` of them
 * wait for a retry at once. A 2026-07-28 client need never retry, and each round it walks away from holds
 * an upstream call open (and one of that instance's concurrency slots) for the continuation's lifetime:
 * unbounded, one caller could fill a shared upstream with calls nobody will finish.
 */
export class WaitingRounds {
  readonly #cap: number;
  readonly #byPrincipal = new Map<string, Set<Exchange>>();

  constructor(cap: number) {
    this.#cap = cap;
  }

  /** `x` sent a round and waits for its retry: one waiting past the cap gives up the principal's oldest. */
  sent(x: Exchange): void {
    const key = principalKey(x.principal);
    let mine = this.#byPrincipal.get(key);
    if (!mine) this.#byPrincipal.set(key, (mine = new Set()));
    // A continued exchange's next round is the principal's newest: its client is answering.
    mine.delete(x);
    mine.add(x);
    let waiting = 0;
    for (const e of mine) if (e.waiting) waiting++;
    const oldest: Exchange[] = [];
    for (const e of mine) {
      if (waiting - oldest.length <= this.#cap) break;
      if (e !== x && e.waiting) oldest.push(e);
    }
    if (oldest.length === 0) return;
    // No attempt waits for them: the reason reaches the upstream (its call cancelled) and a late retry is refused as gone.
    const reason = new JsonRpcError(ErrorCode.InternalError, `given up: more than ${this.#cap} requests of the same caller were waiting for a retry (modern.continuationsPerPrincipal)`);
    for (const e of oldest) e.abandon(reason);
  }

  /** `x` is over (answered, expired, given up, its standing ended). */
  ended(x: Exchange): void {
    const key = principalKey(x.principal);
    const mine = this.#byPrincipal.get(key);
    if (mine?.delete(x) && mine.size === 0) this.#byPrincipal.delete(key);
  }
}
