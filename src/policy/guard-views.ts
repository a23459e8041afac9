import type { Principal } from '../auth/principal.js';

function sameScopes(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const s of a) if (!b.has(s)) return false;
  return true;
}

/**
 * What one session runs each request with (a guard judging by the request's own token, and whatever is
 * built on it), by the token's principal. A session's guard follows its latest token; a request judged by
 * it after an await took the scopes of whichever token came meanwhile (another client of the subject, a
 * refreshed token), so each request takes the view of its own principal when it arrives. Tokens with the
 * same scopes share one view (a principal is one object per kept token; with the token cache off, one per
 * request), so the common case builds nothing.
 */
export class GuardViews<V> {
  readonly #build: (principal: Principal) => V;
  readonly #byPrincipal = new WeakMap<Principal, V>();
  #last: { principal: Principal; view: V } | undefined;

  constructor(build: (principal: Principal) => V) {
    this.#build = build;
  }

  for(principal: Principal): V {
    const last = this.#last;
    if (last !== undefined && (last.principal === principal || sameScopes(last.principal.scopes, principal.scopes))) return last.view;
    let view = this.#byPrincipal.get(principal);
    if (view === undefined) {
      view = this.#build(principal);
      this.#byPrincipal.set(principal, view);
    }
    this.#last = { principal, view };
    return view;
  }
}
