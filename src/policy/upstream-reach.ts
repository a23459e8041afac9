import { globMatch } from './glob.js';

/**
 * Whether some name that starts with `prefix` matches the glob: the pattern walked over the prefix as a
 * set of pattern positions ("*" stays or moves on, "?" and a literal move on); whatever position is left,
 * the rest of the pattern matches some continuation.
 */
export function mayMatchUnder(pattern: string, prefix: string): boolean {
  let at = closure(pattern, [0]);
  for (const c of prefix) {
    const next: number[] = [];
    for (const p of at) {
      const q = pattern[p];
      if (q === '*') next.push(p);
      else if (q !== undefined && (q === '?' || q === c)) next.push(p + 1);
    }
    at = closure(pattern, next);
    if (at.length === 0) return false;
  }
  return true;
}

function closure(pattern: string, positions: number[]): number[] {
  const out = new Set<number>();
  for (let p of positions) {
    out.add(p);
    while (pattern[p] === '*') out.add(++p);
  }
  return [...out];
}

/**
 * Whether the glob matches every name that starts with `prefix` (as a deny: nothing under it is left).
 * Sufficient, not exact: a trailing "*" after a part that matches a start of the prefix. A pattern that
 * covers it otherwise ("gh__?*") is not recognised, and the upstream counts as reachable (shown).
 */
export function coversAllUnder(pattern: string, prefix: string): boolean {
  if (!pattern.endsWith('*')) return false;
  const head = pattern.slice(0, -1);
  for (let k = 0; k <= prefix.length; k++) if (globMatch(head, prefix.slice(0, k))) return true;
  return false;
}
