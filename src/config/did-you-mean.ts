/** Edit distance (insertions, deletions, substitutions, and a swap of two neighbours counts as one). */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate a misspelling most likely meant: the same word in another case or with "-"/"_"
 * differences, or, for words of four letters or more, one within a third of its length in edits (at
 * least one, at most three). None when nothing is that close: a wrong guess is worse than no guess.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const d = fold(c) === fold(word) ? 0 : distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  // Three letters or fewer ("cmd", "ur"): one edit reaches too many words to be a guess worth making.
  const allowed = word.length < 4 ? 0 : Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}
