/**
 * Compatibility forms a model reads as the plain letters, digits and spaces they stand for: fullwidth
 * ASCII (ｉｇｎｏｒｅ), mathematical alphanumerics (𝗶𝗴𝗻𝗼𝗿𝗲), circled and parenthesized letters, letterlike
 * symbols (ℹ), Roman numerals (ⅰ), ligatures (ﬁ), super- and subscripts, small forms, and the other spaces
 * (no-break, em, ideographic). NFKC folds each to its plain form; a pattern written in plain text missed
 * them all, so "ignore previous instructions" in fullwidth letters passed every pattern.
 */
const CLASS =
  '\\u00A0\\u00AA\\u00B2\\u00B3\\u00B5\\u00B9\\u00BA\\u00BC-\\u00BE\\u02B0-\\u02B8\\u1D2C-\\u1D6A\\u2000-\\u200A\\u2024-\\u2026\\u202F\\u205F' +
  '\\u2070-\\u209F\\u2100-\\u217F\\u2460-\\u24FF\\u3000\\uFB00-\\uFB06\\uFE50-\\uFE6B\\uFF01-\\uFF5E\\u{1D400}-\\u{1D7FF}\\u{1F100}-\\u{1F1FF}';

/** The character class above, for a caller's one combined test (see HiddenTextScanner.matches). */
export const COMPATIBILITY_CLASS = CLASS;
const RUNS = new RegExp(`[${CLASS}]`, 'gu');

/** Text with its compatibility forms folded, and where each of its indices came from in the text folded. */
export interface Folded {
  readonly text: string;
  /** Where the character at `i` came from (a folded form's first index). */
  start(i: number): number;
  /** Where a span ending (exclusive) at `j` ends in the original (after the whole form it came from). */
  end(j: number): number;
}

/**
 * `text` with each compatibility form replaced by its NFKC form, one code point at a time (what is
 * around them, combining sequences included, is left as it was); undefined when it has none.
 */
export function foldCompatibility(text: string): Folded | undefined {
  let out = '';
  let from = 0;
  // Per form replaced: where it starts in `out` and in `text`, and its length in each.
  const outAt: number[] = [];
  const outLen: number[] = [];
  const textAt: number[] = [];
  const textLen: number[] = [];
  for (const m of text.matchAll(RUNS)) {
    const plain = m[0].normalize('NFKC');
    if (plain === m[0]) continue;
    out += text.slice(from, m.index);
    outAt.push(out.length);
    outLen.push(plain.length);
    textAt.push(m.index);
    textLen.push(m[0].length);
    out += plain;
    from = m.index + m[0].length;
  }
  if (outAt.length === 0) return undefined;
  out += text.slice(from);
  /** The last form that starts at or before `i` (before, when `strict`): a binary search. */
  const last = (i: number, strict: boolean): number => {
    let lo = 0;
    let hi = outAt.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (strict ? outAt[mid]! < i : outAt[mid]! <= i) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  };
  const after = (k: number, i: number): number => textAt[k]! + textLen[k]! + (i - outAt[k]! - outLen[k]!);
  return {
    text: out,
    start(i) {
      const k = last(i, false);
      if (k < 0) return i;
      return i < outAt[k]! + outLen[k]! ? textAt[k]! : after(k, i);
    },
    end(j) {
      const k = last(j, true);
      if (k < 0) return j;
      return j <= outAt[k]! + outLen[k]! ? textAt[k]! + textLen[k]! : after(k, j);
    },
  };
}
