/**
 * Tags of a page (text declared HTML) as a browser's tokenizer reads them where the scanner's own tag expression
 * (hidden-markup.ts) does not: one holding a "<", and one left open to the end of the text. And which elements are
 * hidden by their name alone, which both read.
 */
import { hidingAttributes } from './hiding-attributes.js';

/**
 * Elements whatever their attributes: a browser renders nothing they hold (a template's is inert until a script
 * copies it; the rest its own style sheet hides, noscript where scripts run, which a host rendering an answer does;
 * SVG draws no <desc> or <metadata>: outside an <svg> a browser would show a <desc>'s text, but no HTML has one).
 * Before 2026-12-06 only script, style and template: what a <title> or <noscript> held passed; before 2026-12-07
 * what an SVG's <desc> or <metadata> held did.
 */
const UNRENDERED = /^(?:script|style|template|title|noscript|noembed|noframes|datalist|rp|desc|metadata)$/i;
/** A dialog's `open` (in HTML after a "/" too, as hiding-attributes.ts reads `hidden`): without it, a browser's own style sheet hides the dialog. */
const OPEN_DIALOG = /(?:^|[\s/])open(?:\s|=|\/|$)/i;

/**
 * Hidden by its name alone, whatever else its attributes say: an UNRENDERED element, or a <dialog> not open
 * (before 2026-12-06 what one held passed).
 */
export function hiddenByName(name: string, attrs: string | undefined): boolean {
  return UNRENDERED.test(name) || (name.length === 6 && name.toLowerCase() === 'dialog' && (attrs === undefined || !OPEN_DIALOG.test(attrs)));
}

/**
 * A tag as a browser reads it in a page: a "<" in an attribute's name or unquoted value is part of it (a parse error
 * it recovers from), so `<span hidden data-x=a<b>` is one hidden <span>; before 2026-12-07 the tag was read as ending
 * at that "<" and its `hidden` never seen. MARKUP_HTML's tag stops at a "<", which keeps each failed attempt short;
 * this is read only where it failed, each stretch of text once (`#read`): linear. Markdown has no such tag (CommonMark).
 */
const ACROSS = /<([a-zA-Z][a-zA-Z0-9-]*)([\s/](?:[^>"'=]|=\s*(?:"[^"]*"|'[^']*'|(?![\s"']))|["'])*)>/y;
/**
 * Any tag as the tokenizer reads it, opening or closing, its name to a space, "/" or ">": to its ">", or without one
 * outside quotes to the end of the text (it stops short only at a "=" whose quoted value is never closed). There a
 * browser drops the tag, and all after its "<" with it, read as its attributes: before 2026-12-07 that passed unfound.
 */
const TO_END = /<\/?[a-zA-Z][^\s/>]*(?:[\s/](?:[^>"'=]|=\s*(?:"[^"]*"|'[^']*'|(?![\s"']))|["'])*)?>?/y;
/** The rest of the text from a tag left open: a match with no group, ended as a comment is. */
const REST = /<[\s\S]*/y;
/** Elements whose text a browser shows as written, tags and all, to their closing tag (a <plaintext> to the end): a tag left open there is text. */
const SHOWN_RAW = /^(?:textarea|xmp|plaintext)$/i;
const SHOWN_END = /<\/(textarea|xmp)(?=[\s/>])/gi;

export class TagsAcross {
  readonly #s: string;
  /** Text before this is read: inside a tag read here, or all of it once one ran to the end. */
  #read = 0;
  /** After the last shown <textarea>, <xmp> or <plaintext> opened (-1: none), and its name. */
  #shownAt = -1;
  #shownName = '';

  constructor(s: string) {
    this.#s = s;
  }

  /** The next match of `markup` (MARKUP_HTML) in `s`, or before it, a hidden element's tag it failed to read for a "<" in it (group 1 its name, 2 its attributes) or a tag left open to the end (REST). */
  static exec(markup: RegExp, s: string, across: TagsAcross | undefined): RegExpExecArray | null {
    const at = markup.lastIndex;
    const m = markup.exec(s);
    const t = across?.before(at, m === null ? s.length : m.index);
    if (t === undefined) return m;
    markup.lastIndex = t.index + t[0].length;
    return t;
  }

  /** An element opened, not hidden, its tag ending at `after`: where a <textarea>, <xmp> or <plaintext> is, a tag left open may be its text. */
  opened(name: string, after: number): void {
    if (!SHOWN_RAW.test(name)) return;
    this.#shownAt = after;
    this.#shownName = name.toLowerCase();
  }

  /** Whether `p` is in the text of the last <textarea>, <xmp> or <plaintext> opened, which no closing tag of its name ends before it. */
  #shownText(p: number): boolean {
    if (this.#shownAt < 0) return false;
    if (this.#shownName === 'plaintext') return true;
    SHOWN_END.lastIndex = this.#shownAt;
    for (let m = SHOWN_END.exec(this.#s); m !== null; m = SHOWN_END.exec(this.#s)) if (m[1]!.toLowerCase() === this.#shownName) return m.index > p;
    return true;
  }

  /** At a tag's "<" in [from, limit), where MARKUP_HTML read no tag: a hidden element's opening tag holding a "<", or the rest of the text from a tag left open. */
  before(from: number, limit: number): RegExpExecArray | undefined {
    const s = this.#s;
    for (let p = s.indexOf('<', Math.max(from, this.#read)); p >= 0 && p < limit; p = s.indexOf('<', Math.max(p + 1, this.#read))) {
      const closing = s.charCodeAt(p + 1) === 0x2f;
      const c = s.charCodeAt(p + (closing ? 2 : 1)) | 0x20; // a letter, either case
      if (c < 0x61 || c > 0x7a) continue;
      TO_END.lastIndex = p;
      const end = p + TO_END.exec(s)![0].length;
      this.#read = end;
      if (s.charCodeAt(end - 1) !== 0x3e) {
        this.#read = s.length;
        if (this.#shownText(p)) return undefined;
        REST.lastIndex = p;
        return REST.exec(s)!;
      }
      if (closing) continue;
      ACROSS.lastIndex = p;
      const t = ACROSS.exec(s);
      if (t !== null && (hiddenByName(t[1]!, t[2]) || hidingAttributes(t[2]!, t[1]))) return t;
    }
    return undefined;
  }
}
