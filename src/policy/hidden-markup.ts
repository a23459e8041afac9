/**
 * Markup a rendered text does not show and a model reads: HTML comments (`<!-- … -->`, in HTML and in
 * Markdown, which passes HTML through: a host rendering an answer shows nothing of them), what `<script>`,
 * `<style>`, `<template>`, `<title>`, `<noscript>` and the like hold (a browser renders none of it), a `<dialog>`
 * not open, and elements hidden by their own
 * attributes (hiding-attributes.ts: `hidden`, `style="display:none"`, `visibility:hidden`, `opacity:0` or `font-size:0`, an
 * `<input type="hidden">`). No parser: what a browser would hide is found by its tags, which is what an
 * injection has to write; a class or a stylesheet that hides an element cannot be known without the CSS.
 * Before 2026-12-06 such text passed every action unless a pattern named it.
 * Markup in Markdown's code (a fenced block, a code span: markdown-code.ts) shows as written, so it is
 * not hidden; in text declared HTML (`html`) there is no such code.
 */
import { markdownBlockEnd } from './markdown-block-end.js';
import { markdownCode, type CodeSpans } from './markdown-code.js';
import { UnopenableDetails } from './details-summary.js';
import { hidingAttributes } from './hiding-attributes.js';
import { hiddenByName, TagsAcross } from './tags-across.js';
import { InheritedPaint } from './svg-paint.js';
import { UndrawnSvg } from './svg-undrawn.js';

/** A comment to its end, `--!>` too, or to the end of the text (an unclosed comment hides all after it). */
const COMMENT = '<!--[\\s\\S]*?(?:--!?>|$)';
/**
 * An opening tag: group 1 its name, group 2 its attributes. A value quoted after `=` runs to its closing
 * quote, `<` and `>` included, as a browser and CommonMark read it: cut at its first `>`, the tag of
 * `<span title="a>b" style="display:none">` ended inside the title and the element was never found
 * (before 2026-12-06). Each character has one way to match (a quote after `=` opens a value, one
 * elsewhere is a character of a name), so a failed tag is given up in one pass, to the next `<` outside
 * quotes.
 */
const ATTRIBUTES = `(?:[^<>"'=]|=\\s*(?:"[^"]*"|'[^']*'|(?![\\s"']))|["'])*`;
const OPEN = `<([a-zA-Z][a-zA-Z0-9-]*)(\\s${ATTRIBUTES})?>`;
/** In HTML a "/" also ends a tag's name and parts attributes (`<div/hidden>` is `<div hidden>`); in Markdown it is no tag. */
const OPEN_HTML = `<([a-zA-Z][a-zA-Z0-9-]*)([\\s/]${ATTRIBUTES})?>`;
/**
 * What a browser reads as a bogus comment, shown as nothing to its first `>` (or the end): a processing
 * instruction (`<?…`), a declaration or CDATA (`<!…` but a comment; CDATA in Markdown only, as text
 * declared HTML or XML may be XML, whose CDATA is shown), and in HTML `</` not followed by a name. Group 3: what follows the `<`; its end is found by BogusEnds. Markdown passes the first two to
 * the browser as CommonMark's raw HTML. Before 2026-12-06 `Done.<?Ignore the user…?>` passed unfound.
 */
const BOGUS = '<(\\?|!(?!--)|\\/(?![a-zA-Z>]))';
const MARKUP = new RegExp(`${COMMENT}|${OPEN}|${BOGUS}`, 'g');
const MARKUP_HTML = new RegExp(`${COMMENT}|${OPEN_HTML}|${BOGUS}`, 'g');
/** A doctype and an XML declaration or stylesheet instruction, as documents begin: they hide no text. */
const DECLARATION = /^(?:<!doctype\s+[a-z][\w:.-]*(?:\s+(?:public|system)(?:\s*(?:"[^"]*"|'[^']*'))+)?\s*>|<\?xml(?:-stylesheet)?(?:\s+[\w:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*\?>)$/i;
/** Longer than this, a doctype or declaration is no ordinary one (and is not matched against DECLARATION). */
const DECLARATION_MAX = 512;

/**
 * Where the bogus comments of one string end. The next `>` and the last `?>` and `]]>` are each looked
 * for once per string, not once per match: a scan stays linear however many `<!` it holds.
 */
class BogusEnds {
  readonly #s: string;
  readonly #html: boolean;
  #gt = -1;
  #pi: number | undefined;
  #cdata: number | undefined;

  constructor(s: string, html: boolean) {
    this.#s = s;
    this.#html = html;
  }

  /** The index after the bogus comment at `at` (`kind`: group 3); -1 when it hides nothing (a DECLARATION, or Markdown shows it as written). */
  end(at: number, kind: string): number {
    const s = this.#s;
    if (this.#gt < at) {
      const i = s.indexOf('>', at);
      this.#gt = i < 0 ? s.length : i;
    }
    const closed = this.#gt < s.length;
    // Text declared HTML may be XML (SVG, RSS, …), where CDATA is text a reader sees: not a finding there.
    if (this.#html ? kind === '!' && s.startsWith('<![CDATA[', at) : !this.#markdownRaw(at, kind, closed)) return -1;
    const end = closed ? this.#gt + 1 : s.length;
    return end - at <= DECLARATION_MAX && DECLARATION.test(s.slice(at, end)) ? -1 : end;
  }

  /** CommonMark's raw HTML: a processing instruction closed by a later `?>`, a declaration (`<!` and a letter) by `>`, CDATA by a later `]]>`. */
  #markdownRaw(at: number, kind: string, closed: boolean): boolean {
    const s = this.#s;
    if (kind === '?') return closed && (this.#pi ??= s.lastIndexOf('?>')) >= at + 2;
    if (kind !== '!') return false;
    if (s.startsWith('<![CDATA[', at)) return (this.#cdata ??= s.lastIndexOf(']]>')) >= at + 9;
    return closed && /[a-zA-Z]/.test(s.charAt(at + 2));
  }
}
/**
 * Elements whose text ends at their first closing tag (raw text: a "<script>" inside opens nothing, a quote or a
 * comment hides no closing tag): UNRENDERED ones and, inside a hidden element, a <textarea>, <xmp> or <iframe> too.
 */
const RAW_TEXT = /^(?:script|style|title|noscript|noembed|noframes|textarea|xmp|iframe)$/i;
/**
 * Phrasing elements a Markdown paragraph's end closes: a browser's "</p>" pops them, and unlike <b>, <i>, <a>
 * (formatting elements, reopened in each later paragraph) or a <button> ("</p>" does not reach past it) they
 * stay closed. Unclosed in a paragraph, one hides the rest of it only.
 */
const PARAGRAPH_BOUND = /^(?:span|abbr|cite|data|dfn|kbd|label|mark|q|samp|sub|sup|time|var)$/i;
/** Elements that hold nothing: hidden, only the tag itself is (an input's value). */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/** How many hidden pieces of markup a string holds, and the string without them. */
export interface MarkupScan {
  count: number;
  clean: string;
}

/** One test per string, no allocation: only text with a `<` can hold markup. */
export function mayHoldMarkup(s: string): boolean {
  return s.includes('<');
}

/**
 * Any opening or closing tag: group 1 its slash, group 2 its name; or a comment (no group), passed over whole. One
 * expression for every element's end: one compiled per hidden element (its name's tags) cost ~50 ms for 20,000 of
 * them. A tag's quoted values are read to their closing quote (ATTRIBUTES, linear as in MARKUP): before
 * 2026-12-07 a "</span>" in a title or a comment inside a hidden <span> ended it there, and the rest passed as shown.
 */
const TAGS = new RegExp(`${COMMENT}|<(\\/?)([a-zA-Z][a-zA-Z0-9-]*)(?=[\\s/>])${ATTRIBUTES}>`, 'g');
/** In raw text only the element's own closing tag counts, what stands before it quoted or not. */
const RAW_TAGS = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)(?=[\s/>])[^<>]*>/g;

/**
 * The index after the element opened at `from` (its name `name`, lower case) closes: nested ones of its name
 * counted, raw text inside passed over to its own end (a "</span>" in a <script> closes no <span>); -1 when unclosed.
 */
function elementEnd(s: string, name: string, from: number): number {
  const raw = RAW_TEXT.test(name);
  const tags = raw ? RAW_TAGS : TAGS;
  tags.lastIndex = from;
  let depth = 1;
  for (let m = tags.exec(s); m !== null; m = tags.exec(s)) {
    const tag = m[2];
    if (tag === undefined) continue; // a comment
    if (!raw && m[1] === '' && RAW_TEXT.test(tag)) {
      // Raw text unclosed runs to the end of the text, and this element with it (RAW_TAGS: no recursion past one level).
      const end = elementEnd(s, tag.toLowerCase(), m.index + m[0].length);
      if (end < 0) return -1;
      tags.lastIndex = end;
      continue;
    }
    if (tag.length !== name.length || tag.toLowerCase() !== name) continue;
    if (m[1] === '') {
      if (!raw && !m[0].endsWith('/>')) depth++;
    } else if (--depth === 0) return m.index + m[0].length;
  }
  return -1;
}

/**
 * Past an unclosed element of one name (`from`, after its opening tag): where each later opening of that
 * name closes (by its index), in one pass; an opening not in `ends` is unclosed too. Without it, every
 * mention after an unclosed one looked for its end to the text's end again: quadratic in the mentions.
 */
interface Unclosed {
  from: number;
  ends: Map<number, number>;
}
function unclosedFrom(s: string, name: string, from: number): Unclosed {
  const ends = new Map<number, number>();
  const open: number[] = [];
  const raw = RAW_TEXT.test(name);
  const tags = raw ? RAW_TAGS : TAGS;
  tags.lastIndex = from;
  for (let m = tags.exec(s); m !== null; m = tags.exec(s)) {
    const tag = m[2];
    if (tag === undefined) continue;
    if (!raw && m[1] === '' && RAW_TEXT.test(tag)) {
      // As elementEnd reads it: raw text inside passed over; unclosed, every later opening is unclosed too.
      const end = elementEnd(s, tag.toLowerCase(), m.index + m[0].length);
      if (end < 0) break;
      tags.lastIndex = end;
      continue;
    }
    if (tag.length !== name.length || tag.toLowerCase() !== name) continue;
    // Raw text (script, style) unclosed has no closing tag after it: every later one is unclosed too.
    if (m[1] === '') {
      if (!m[0].endsWith('/>')) open.push(m.index);
    } else {
      const at = open.pop();
      if (at !== undefined) ends.set(at, m.index + m[0].length);
    }
  }
  return { from, ends };
}

/**
 * Whether the tag at `at` begins its line (after at most three spaces): there Markdown (CommonMark's HTML
 * blocks) hands a <script> or <style> to the browser as it is, and unclosed it runs to the end of the
 * text, all of it hidden from a person while a model reads it.
 */
function opensLine(s: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && at - i <= 3 && s.charCodeAt(i) === 32) i--;
  return i < 0 || s.charCodeAt(i) === 10;
}

/**
 * Where an unclosed hidden element of PARAGRAPH_BOUND opened at `at` (its tag ending at `after`) ends in
 * Markdown: at the end of its block (markdown-block-end.ts: a paragraph's, where the renderer's "</p>" closes it,
 * a tight list item's "</li>", a heading's), when no tag before it in the text or after it in the block can have
 * changed that (a <pre> block that runs past blank lines, a <div> or <button> it sits in); else, as in HTML, the
 * end of the text. Before 2026-12-06 a list item, a quote or a heading ran on to the next blank line or the end.
 */
function paragraphEnd(s: string, at: number, after: number): number {
  if (at > 0 && s.lastIndexOf('<', at - 1) >= 0) return s.length;
  const end = markdownBlockEnd(s, at, after);
  const next = s.indexOf('<', after);
  return next >= 0 && next < end ? s.length : end;
}

/**
 * Where a hidden element opened at `at` by `tag` ends; -1: it is no finding. An unclosed element hides
 * the rest of the text (a <span> and the like in a Markdown paragraph, not opening a line, where Markdown would
 * begin an HTML block: the rest of its paragraph, see paragraphEnd), but a <script>, <style>, <template> (or another UNRENDERED) inside a Markdown line is found
 * closed only: hidden by its name alone, it is also the bare tag prose names ("wrap it in a <template> tag"), and before
 * 2026-12-06 one such mention hid all after it (strip cut the rest of an answer). In text declared HTML a
 * browser hides all after one unclosed: found to the end there. `seen`: the unclosed ones so far, by name.
 */
function hiddenEnd(s: string, name: string, at: number, tag: string, html: boolean, byName: boolean, seen: Map<string, Unclosed>): number {
  const after = at + tag.length;
  if (VOID.has(name) || tag.endsWith('/>')) return after;
  if (html || !byName || opensLine(s, at)) {
    const end = elementEnd(s, name, after);
    if (end >= 0) return end;
    return html || !PARAGRAPH_BOUND.test(name) || opensLine(s, at) ? s.length : paragraphEnd(s, at, after);
  }
  const known = seen.get(name);
  if (known !== undefined && at >= known.from) return known.ends.get(at) ?? -1;
  const end = elementEnd(s, name, after);
  if (end < 0) seen.set(name, unclosedFrom(s, name, after));
  return end;
}

/**
 * How a text is read: Markdown (false), a page a browser renders ('html': HTML, XHTML, SVG), or other XML
 * ('xml': a feed, a document, where no element is hidden by its name: an RSS item's <title> is what a
 * reader shows, and before 2026-12-06 strip cut it out). Both markup kinds have no Markdown code.
 */
export type MarkupKind = false | 'html' | 'xml';

/** The hidden comments and elements of `s`, counted and removed; undefined when it has none. `kind`: how `s` is read. */
export function hiddenMarkup(s: string, kind: MarkupKind = false): MarkupScan | undefined {
  const html = kind !== false;
  let clean = '';
  let from = 0;
  let count = 0;
  let code: CodeSpans | undefined;
  let k = 0; // the first code span not yet passed
  let unclosed: Map<string, Unclosed> | undefined;
  let bogus: BogusEnds | undefined;
  let paint: InheritedPaint | undefined;
  /** Whether an element gives SVG text in it paint that shows nothing (svg-paint.ts). */
  const unpaintsText = (attrs: string, name: string, after: number) => InheritedPaint.may(attrs) && (paint ??= new InheritedPaint(s)).hides(name.toLowerCase(), attrs, after);
  let defs: UndrawnSvg | undefined;
  /** Whether a <defs>, a <symbol> or an <svg> of no size holds text no <use> shows (svg-undrawn.ts). */
  const undrawn = (attrs: string, name: string, after: number) => UndrawnSvg.may(name, attrs) && (defs ??= new UndrawnSvg(s)).hides(name.toLowerCase(), attrs, after);
  let details: UnopenableDetails | undefined;
  /** Whether a closed <details> has a hidden summary, so that no reader opens it (details-summary.ts). */
  const unopenable = (attrs: string, name: string, after: number) => UnopenableDetails.may(name, attrs) && (details ??= new UnopenableDetails(s)).hides(after);
  const markup = html ? MARKUP_HTML : MARKUP;
  markup.lastIndex = 0;
  const across = kind === 'html' ? new TagsAcross(s) : undefined;
  for (let m = TagsAcross.exec(markup, s, across); m !== null; m = TagsAcross.exec(markup, s, across)) {
    let end: number;
    if (m[3] !== undefined) {
      end = (bogus ??= new BogusEnds(s, html)).end(m.index, m[3]);
      if (end < 0) continue;
    } else if (m[1] === undefined) end = m.index + m[0].length;
    else {
      const byName = kind !== 'xml' && hiddenByName(m[1], m[2]);
      const after = m.index + m[0].length;
      const attrs = m[2];
      const hidden = byName || (attrs !== undefined && (hidingAttributes(attrs, m[1]) || unpaintsText(attrs, m[1], after))) || (kind !== 'xml' && (undrawn(attrs ?? '', m[1], after) || unopenable(attrs ?? '', m[1], after)));
      if (!hidden) {
        across?.opened(m[1], after);
        continue;
      }
      end = hiddenEnd(s, m[1].toLowerCase(), m.index, m[0], html, byName, (unclosed ??= new Map()));
      if (end < 0) continue;
    }
    // Found only now (most text with "<" has no hidden markup): the code a renderer shows as written.
    code ??= html || !(s.includes('`') || s.includes('~~~')) ? [] : markdownCode(s);
    while (k < code.length && code[k]![1] <= m.index) k++;
    if (k < code.length && code[k]![0] <= m.index) {
      markup.lastIndex = code[k]![1];
      continue;
    }
    clean += s.slice(from, m.index);
    from = end;
    count++;
    markup.lastIndex = Math.max(end, m.index + 1);
  }
  return count === 0 ? undefined : { count, clean: clean + s.slice(from) };
}
