import { joinPatterns } from '../config/guardrails-schema.js';
import { clipped } from '../observability/clipped.js';
import { COMPATIBILITY_CLASS, foldCompatibility } from './compatibility-forms.js';
import { hiddenMarkup, mayHoldMarkup, type MarkupKind } from './hidden-markup.js';
import { mayHoldDefinition, unusedDefinitions } from './markdown-definitions.js';
import { mayHoldImage, outsideImages } from './outside-images.js';

/**
 * Hidden text: characters a model reads and a person reviewing the text does not see, markup a rendered
 * text does not show, images that send what their URL holds to another host, and configured phrases.
 * Six kinds, each one a metric label:
 * - tag: the Unicode Tags block (U+E0000–E007F), which mirrors ASCII invisibly ("ASCII smuggling").
 * - bidi: directional embeddings, overrides and isolates (U+202A–202E, U+2066–2069) and the directional
 *   marks (U+200E, U+200F, U+061C), which reorder what is shown ("Trojan Source").
 * - invisible: zero-width and other invisible format characters (general category Cf and look-alikes:
 *   U+00AD, U+034F, U+115F, U+1160, U+17B4, U+17B5, U+180E, U+200B–200D, U+2060–2064, U+206A–206F,
 *   U+3164, U+FEFF, U+FFA0, U+FFF9–FFFB, U+13430–1343F, U+1BCA0–1BCA3, U+1D173–1D17A, and the unassigned
 *   default-ignorables U+2065, U+FFF0–FFF8, U+E0080–E00FF, U+E01F0–E0FFF, and the control characters
 *   but tab, line breaks and form feed: ANSI escapes hide text in a terminal), and runs of two or more
 *   variation selectors, Mongolian ones included (one after a character chooses its glyph; a run encodes bytes),
 *   and one (but VS15, VS16) after ASCII that has no variants (see NO_VARIANTS).
 * - markup: an HTML comment, an element hidden by its attributes (hidden-markup.ts) or a Markdown comment, a link
 *   reference definition no link uses (markdown-definitions.ts), one per piece.
 * - image: a Markdown or HTML image from a host not allowed (outside-images.ts), one per image.
 * - pattern: a match of one of the configured regular expressions.
 * What text legitimately needs is not counted: a zero-width joiner between two emoji (👩‍💻), a zero-width
 * (non-)joiner between two letters of a script that uses them (Arabic, the Indic scripts, …), a tag
 * sequence spelling a subdivision flag after U+1F3F4 (🏴 England), U+FEFF as a string's first character.
 */
export type HiddenKind = 'tag' | 'bidi' | 'invisible' | 'markup' | 'image' | 'pattern';

/** Per kind, how many characters (patterns: matches) one string holds, and the string without them. */
export interface TextScan {
  counts: Record<HiddenKind, number>;
  /** Hidden characters and markup removed, images from outside hosts and pattern matches replaced with REMOVED. */
  clean: string;
}

/** What a pattern match is replaced with when stripping. */
export const REMOVED = '[removed]';

const TAG = '\\u{E0000}-\\u{E007F}';
const BIDI = '\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
// The unassigned default-ignorables last (U+2065, U+FFF0–FFF8, U+E0080–E00FF, U+E01F0–E0FFF): renderers
// show them as nothing, and U+E0080–E00FF mirror ASCII right after the Tags block.
const INVISIBLE =
  '\\u00AD\\u034F\\u115F\\u1160\\u17B4\\u17B5\\u180E\\u200B-\\u200D\\u2060-\\u2064\\u206A-\\u206F\\u3164\\uFEFF\\uFFA0\\uFFF9-\\uFFFB\\u{13430}-\\u{1343F}\\u{1BCA0}-\\u{1BCA3}\\u{1D173}-\\u{1D17A}' +
  '\\u2065\\uFFF0-\\uFFF8\\u{E0080}-\\u{E00FF}\\u{E01F0}-\\u{E0FFF}' +
  // Controls but tab, line feed, vertical tab, form feed and carriage return (text layout): a terminal
  // client acts on them, and an ANSI escape (ESC [8m, or C1 CSI U+009B) conceals text or writes over it.
  '\\x00-\\x08\\x0E-\\x1F\\x7F-\\x9F';
/** Variation selectors, the Mongolian ones included (U+180B–180D, U+180F): one chooses a form, a run encodes bytes. */
const SELECTORS = '\\u180B-\\u180D\\u180F\\uFE00-\\uFE0F\\u{E0100}-\\u{E01EF}';

/**
 * ASCII a variation selector never follows in a sequence that exists (no standardized, emoji or ideographic
 * variation sequence has an ASCII base but a digit, "#" or "*": keycaps, the slashed zero), and the selectors
 * counted one at a time there: one after each letter spells a byte per letter (VS1–VS14, VS17–VS256) along
 * visible text. VS15 and VS16 (text and emoji presentation) are left: an emoji dropped from a text often
 * leaves one behind, and one carries a bit at most.
 */
const NO_VARIANTS = '\\x20-\\x22\\x24-\\x29\\x2B-\\x2F\\x3A-\\x7E';
const LONE = '\\u180B-\\u180D\\u180F\\uFE00-\\uFE0D\\u{E0100}-\\u{E01EF}';

/** One test per string: the common case (nothing hidden) costs this and nothing else. */
// The selector first, then what is before it: plain text fails at its first class test, as before.
const ANY = new RegExp(`[${TAG}${BIDI}${INVISIBLE}]|[${SELECTORS}]{2}|(?<=[${NO_VARIANTS}])[${LONE}]`, 'u');
/** Runs of one kind each: group 1 tags, 2 bidi, 3 invisible; no group: variation selectors (a run, or one after ASCII that has no variants). */
const RUNS = new RegExp(`([${TAG}]+)|([${BIDI}]+)|([${INVISIBLE}]+)|[${SELECTORS}]{2,}|(?<=[${NO_VARIANTS}])[${LONE}]`, 'gu');

const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
/** Scripts whose spelling uses ZWJ / ZWNJ between letters (Persian's ZWNJ, Indic half forms, …). */
const JOINING =
  /^[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]$/u;
/**
 * A subdivision flag's tags, then CANCEL TAG: only the three flags Unicode recommends for general
 * interchange (England, Scotland, Wales). Any tag letters after U+1F3F4 would let a string spell words in
 * six-letter pieces ("🏴ignore␡🏴previo␡…") that a model reads and a person does not see; the other
 * valid subdivisions (us-ca, fr-idf, …) have no flag on common platforms and are counted like any tag.
 */
const FLAG_TAGS = /^(?:\u{E0067}\u{E0062}(?:\u{E0065}\u{E006E}\u{E0067}|\u{E0073}\u{E0063}\u{E0074}|\u{E0077}\u{E006C}\u{E0073}))\u{E007F}$/u;
const BLACK_FLAG = 0x1f3f4;
const ZWJ = 0x200d;
const ZWNJ = 0x200c;
const BOM = 0xfeff;

/** The code point that ends just before index `at` (a surrogate pair counts as one). */
function before(s: string, at: number): number {
  if (at <= 0) return -1;
  const low = s.charCodeAt(at - 1);
  if (at >= 2 && low >= 0xdc00 && low <= 0xdfff) {
    const high = s.charCodeAt(at - 2);
    if (high >= 0xd800 && high <= 0xdbff) return s.codePointAt(at - 2)!;
  }
  return low;
}

function char(cp: number | undefined): string {
  return cp === undefined || cp < 0 ? '' : String.fromCodePoint(cp);
}

/** A ZWJ in an emoji sequence: a pictograph (with its emoji presentation or skin tone) before, one after. */
function inEmoji(s: string, at: number): boolean {
  let i = at;
  let cp = before(s, i);
  if (cp === 0xfe0f || (cp >= 0x1f3fb && cp <= 0x1f3ff)) {
    i -= cp > 0xffff ? 2 : 1;
    cp = before(s, i);
  }
  return PICTOGRAPHIC.test(char(cp)) && PICTOGRAPHIC.test(char(s.codePointAt(at + 1)));
}

/** Whether a run the class matched is text the string needs (see the file comment). */
function needed(s: string, at: number, run: string, tags: boolean): boolean {
  if (tags) return before(s, at) === BLACK_FLAG && FLAG_TAGS.test(run);
  if (run.length !== 1) return false;
  const c = run.charCodeAt(0);
  if (c === BOM) return at === 0;
  if (c !== ZWJ && c !== ZWNJ) return false;
  if (c === ZWJ && inEmoji(s, at)) return true;
  return JOINING.test(char(before(s, at))) && JOINING.test(char(s.codePointAt(at + 1)));
}

function codePoints(run: string): number {
  let n = 0;
  for (const _ of run) n++;
  return n;
}

function noCounts(): Record<HiddenKind, number> {
  return { tag: 0, bidi: 0, invisible: 0, markup: 0, image: 0, pattern: 0 };
}

/** The hidden characters of a string (ANY matched it), counted and removed; undefined when all were needed. */
function hiddenCharacters(s: string): TextScan | undefined {
  const counts = noCounts();
  let clean = '';
  let from = 0;
  let found = false;
  RUNS.lastIndex = 0;
  for (let m = RUNS.exec(s); m !== null; m = RUNS.exec(s)) {
    const run = m[0];
    if (needed(s, m.index, run, m[1] !== undefined)) continue;
    const kind: HiddenKind = m[1] !== undefined ? 'tag' : m[2] !== undefined ? 'bidi' : 'invisible';
    counts[kind] += codePoints(run);
    clean += s.slice(from, m.index);
    from = m.index + run.length;
    found = true;
  }
  return found ? { counts, clean: clean + s.slice(from) } : undefined;
}

/** Code points that render as nothing: what patterns must not see, counted or not (see asRead). */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
/** Either those or a compatibility form: one test says whether a string is read otherwise than it is written. */
const UNREAD = new RegExp(`[\\p{Default_Ignorable_Code_Point}${COMPATIBILITY_CLASS}]`, 'u');
const IGNORABLE_RUNS = /\p{Default_Ignorable_Code_Point}+/gu;

/** `text` without its default-ignorable code points, and where each of its indices was in `text`. */
function asRead(text: string): { text: string; at: (i: number) => number } {
  let out = '';
  let from = 0;
  let removed = 0;
  // Per run removed: where it was cut out of `out`, and how many units were removed up to there.
  const cuts: number[] = [];
  const shifts: number[] = [];
  for (const m of text.matchAll(IGNORABLE_RUNS)) {
    out += text.slice(from, m.index);
    removed += m[0].length;
    cuts.push(out.length);
    shifts.push(removed);
    from = m.index + m[0].length;
  }
  out += text.slice(from);
  const at = (i: number): number => {
    // The last run cut out at or before `i` (a binary search: runs are few, strings may be long).
    let lo = 0;
    let hi = cuts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cuts[mid]! <= i) lo = mid + 1;
      else hi = mid;
    }
    return i + (lo === 0 ? 0 : shifts[lo - 1]!);
  };
  return { text: out, at };
}

/** `text` with each of `spans` (in order, not overlapping; empty ones left) replaced by REMOVED. */
function replaced(text: string, spans: ReadonlyArray<readonly [number, number]>): string {
  let clean = '';
  let from = 0;
  for (const [start, end] of spans) {
    if (start === end) continue;
    clean += text.slice(from, start) + REMOVED;
    from = end;
  }
  return clean + text.slice(from);
}

/** A string with its hidden characters removed (patterns aside) and cut to `max`: for paths and names in audit lines. */
export function shown(s: string, max = 64): string {
  const clean = ANY.test(s) ? (hiddenCharacters(s)?.clean ?? s) : s;
  // A copy when cut (clipped): a slice would keep the whole string alive in the audit ring.
  return clipped(clean, max);
}

/**
 * Finds hidden text in strings: the character classes above, and the configured patterns. Patterns are
 * matched on the text with its hidden characters (and every other invisible one) removed and its
 * compatibility forms folded (compatibility-forms.ts), so neither "ignore\u200Bprevious" nor "ｉｇｎｏｒｅ
 * ｐｒｅｖｉｏｕｓ" slips past "ignore previous". Stateless apart from its compiled expressions: one instance serves every caller.
 */
export class HiddenTextScanner {
  /** Tells pattern sets apart (caches of scans are per set). */
  readonly key: string;
  readonly #test: RegExp | undefined;
  readonly #all: RegExp | undefined;
  /** The hosts images may come from (guardrails.hiddenText.imageHosts); any other's is found. */
  readonly #imageHosts: readonly string[];

  constructor(patterns: readonly string[], flags = 'iu', imageHosts: readonly string[] = []) {
    this.key = JSON.stringify(imageHosts.length === 0 ? patterns : { patterns, imageHosts });
    this.#imageHosts = imageHosts.map((h) => h.toLowerCase());
    const source = joinPatterns(patterns); // as the config check joins them: a set it passed compiles here
    this.#test = patterns.length > 0 ? new RegExp(source, flags) : undefined;
    this.#all = patterns.length > 0 ? new RegExp(source, `${flags}g`) : undefined;
  }

  /** Whether any pattern is configured (else nothing is matched across strings either). */
  get patterned(): boolean {
    return this.#test !== undefined;
  }

  /**
   * undefined: nothing hidden (the common case, one regex test and one search for "<"; two more with
   * patterns). Markup is looked for once hidden characters are out (they would split `<!--`), patterns
   * once markup is out (what a comment holds is counted as markup, not twice). `html`: the text is declared
   * HTML or XML, where Markdown's code (whose markup shows as written) is no code.
   */
  scan(s: string, kind: MarkupKind = false): TextScan | undefined {
    const html = kind !== false;
    const chars = ANY.test(s) ? hiddenCharacters(s) : undefined;
    let text = chars ? chars.clean : s;
    let counts = chars?.counts;
    const markup = mayHoldMarkup(text) ? hiddenMarkup(text, kind) : undefined;
    if (markup !== undefined) {
      counts ??= noCounts();
      counts.markup = markup.count;
      text = markup.clean;
    }
    // Markdown's comments (a definition no link uses); text declared HTML or XML has no Markdown.
    const unused = !html && mayHoldDefinition(text) ? unusedDefinitions(text) : undefined;
    if (unused !== undefined) {
      counts ??= noCounts();
      counts.markup += unused.count;
      text = unused.clean;
    }
    const images = mayHoldImage(text) ? outsideImages(text, this.#imageHosts, html) : undefined;
    if (images !== undefined) {
      counts ??= noCounts();
      counts.image = images.length;
      text = replaced(text, images);
    }
    const found = this.#test === undefined ? undefined : this.#patterns(text);
    if (found !== undefined) {
      counts ??= noCounts();
      counts.pattern = found.matches;
      text = found.clean;
    }
    return counts === undefined ? undefined : { counts, clean: text };
  }

  /**
   * The pattern matches in `text`, and `text` with each replaced by REMOVED. Matched on the text as read:
   * without the invisible characters left in it (one variation selector after a letter, a Mongolian
   * selector, an unassigned ignorable, a joiner text needs), any of which split "ignore\uFE0F previous" past
   * the pattern; what lies outside a match is kept as it was.
   */
  #patterns(text: string): { matches: number; clean: string } | undefined {
    const found = this.matches(text);
    return found === undefined ? undefined : { matches: found.length, clean: replaced(text, found) };
  }

  /**
   * Where in `text` the patterns match, as read (see #patterns; compatibility forms folded to what they
   * stand for): [start, end) pairs in order; undefined when none do.
   */
  matches(text: string): Array<[number, number]> | undefined {
    if (this.#test === undefined) return undefined;
    const unread = UNREAD.test(text);
    const read = unread && IGNORABLE.test(text) ? asRead(text) : undefined;
    const fold = unread ? foldCompatibility(read?.text ?? text) : undefined;
    const target = fold?.text ?? read?.text ?? text;
    if (!this.#test.test(target)) return undefined;
    const re = this.#all!;
    re.lastIndex = 0;
    const out: Array<[number, number]> = [];
    // Bounded by the text: every match advances (the config refuses patterns that match "").
    for (let m = re.exec(target); m !== null; m = re.exec(target)) {
      if (m[0] === '') {
        out.push([m.index, m.index]);
        re.lastIndex++;
        continue;
      }
      // As read, then without the ignorables: each step maps the match back to the text before it.
      const from = fold ? fold.start(m.index) : m.index;
      const to = fold ? fold.end(m.index + m[0].length) : m.index + m[0].length;
      const start = read ? read.at(from) : from;
      const end = read ? read.at(to - 1) + 1 : to;
      out.push([start, end]);
    }
    return out;
  }
}
