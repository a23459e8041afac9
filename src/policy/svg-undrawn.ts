/**
 * SVG a browser never draws: what a `<defs>` holds is drawn only where a `<use>` (or a paint, a clip, a
 * textPath) refers to it, and a `<symbol>` only through a `<use>`. Text in one that no `<use>` shows reaches a
 * model and no person: before 2026-12-07 it was not found. Found, as an element hidden by its attributes is:
 * a closed `<defs>` holding text (any character but white space) outside its children a shown `<use>` refers
 * to (by the child's id or one inside it), and a closed `<symbol>` holding text when no id in it is referred
 * to. A `<use>` that shows nothing (hidden, or whose paint leaves text unpainted) refers to nothing: text it
 * would show stays unseen. Gradients, paths for a textPath, shapes a paint refers to hold no text and are left;
 * text a `<use>` shows is judged as any (its own opacity, its paint). An unclosed one is left: in Markdown
 * prose names the tags ("put shapes in <defs>"), and hidden-markup.ts would hide all after it.
 * An `<svg>` of no size (a width or height below 2px) is read as a `<defs>`: it clips all it holds (its overflow
 * is hidden unless it says otherwise), so its text no `<use>` elsewhere shows (a sprite sheet's symbols) is
 * unseen; before 2026-12-07 `<svg width="0" height="0"><text>…</text></svg>` was not found.
 */
import { decodeReferences } from './html-references.js';
import { hidingAttributes, tiny, unpaintedSvgText } from './hiding-attributes.js';
import { styleDeclarations } from './style-declarations.js';
import { someAttribute } from './tag-attributes.js';

/**
 * Elements whose content is drawn only where something refers to it: a <defs>'s children each by a <use> or a
 * url(#id), a <symbol> by a <use>, a <mask>, <clipPath>, <pattern> or <marker> by a url(#id) (a mask, a clip,
 * a paint, a path's marker). Before 2026-12-07 text in one of the last four nothing referred to was not found.
 */
const UNDRAWN = /^(?:defs|symbol|mask|clippath|pattern|marker)$/i;
const SVG_ONLY = /^(?:mask|clippath|pattern|marker)$/;
const SVG_OPEN = /<svg[\s/>]/i;
/** A url() reference to an id (in an attribute or a style, quoted or not): group 1 the id. */
const URL_REF = /url\(\s*["']?\s*#([^"')\s]+)/gi;
/** Any tag: group 1 its slash, 2 its name, 3 its attributes. */
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)([\s/][^<>]*)?>/g;
const USE = /<use([\s/][^<>]*)?>/gi;
/** A fragment reference (`href="#id"`, SVG 1.1's `xlink:href`): group 1, 2 or 3 the id. */
const HREF = /(?:^|[\s/])(?:xlink:)?href\s*=\s*(?:"\s*#([^"]*)"|'\s*#([^']*)'|#([^\s"'>]+))/i;
const ID = /(?:^|[\s/])id\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;
const SELF_CLOSING = /\/\s*$/;
/** Only an <svg> whose attributes name a size can have none. */
const SIZE = /width|height/i;
const SHOWN_OVERFLOW = /visible|auto/;
const TEXT = /\S/g;

/** One string's `<defs>` and `<symbol>` elements judged against the ids its shown `<use>` elements refer to. */
export class UndrawnSvg {
  readonly #s: string;
  #used: Set<string> | undefined;
  /** Where the last element read ends: one inside it is not read again (inside a shown or textless one, it shows or holds none). */
  #readTo = -1;
  /** Where the string's first <svg> tag is (2^32 - 1 for none). */
  #svgAt: number | undefined;

  constructor(s: string) {
    this.#s = s;
  }

  /** Whether an element so named, with these attributes, can be one (without allocating, but for an <svg> that names a size). */
  static may(name: string, attrs: string): boolean {
    return UNDRAWN.test(name) || (name.length === 3 && name.toLowerCase() === 'svg' && SIZE.test(attrs) && sizeless(attrs));
  }

  /** Whether the element named `name` (lower case), its tag's attributes `attrs` ending at `after`, holds text no `<use>` shows. */
  hides(name: string, attrs: string, after: number): boolean {
    if (after <= this.#readTo || SELF_CLOSING.test(attrs)) return false;
    // Other XML names these too (a logback <pattern>): only after an <svg> opened are they SVG's.
    if (SVG_ONLY.test(name) && after <= (this.#svgAt ??= this.#s.search(SVG_OPEN) >>> 0)) return false;
    const used = (this.#used ??= usedIds(this.#s));
    // A <defs> (or an <svg> of no size) is judged child by child; the others as one whole.
    const symbol = name !== 'defs' && name !== 'svg';
    let unit = { text: false, used: symbol && used.has(idOf(attrs)) };
    let hidden = false;
    let depth = 0;
    let last = after;
    TAG.lastIndex = after;
    for (let m = TAG.exec(this.#s); m !== null; m = TAG.exec(this.#s)) {
      TEXT.lastIndex = last;
      if (TEXT.exec(this.#s)!.index < m.index) unit.text = true;
      last = TAG.lastIndex;
      const closing = m[1] === '/';
      if (closing && depth === 0) {
        if (m[2]!.toLowerCase() !== name) continue;
        this.#readTo = last;
        return hidden || (unit.text && !unit.used);
      }
      const attributes = m[3] ?? '';
      if (!closing && used.has(idOf(attributes))) unit.used = true;
      depth += closing ? -1 : SELF_CLOSING.test(attributes) ? 0 : 1;
      // A <defs> child ended: it is one unit, shown or not as a whole.
      if (!symbol && depth === 0) {
        hidden ||= unit.text && !unit.used;
        unit = { text: false, used: false };
      }
    }
    this.#readTo = this.#s.length;
    return false;
  }
}

/**
 * Whether an <svg>'s attributes give it no size that shows: a width or height (attribute, or its style's, which
 * wins) below 2px, and an overflow that clips (an <svg>'s is hidden by default; `visible` and, in SVG, `auto` show).
 */
function sizeless(attrs: string): boolean {
  const size = new Map<string, string>();
  someAttribute(attrs, (name) => name === 'width' || name === 'height', (name, value) => {
    size.set(name, decodeReferences(value).trim().toLowerCase());
    return false;
  });
  const style = styleDeclarations(attrs);
  if (SHOWN_OVERFLOW.test(style.get('overflow') ?? '')) return false;
  const [w, h] = [style.get('width') ?? size.get('width'), style.get('height') ?? size.get('height')];
  return tiny(w) || tiny(h) || tiny(style.get('max-width')) || tiny(style.get('max-height'));
}

/** The id an element's attributes give it; "" for none. */
function idOf(attrs: string): string {
  const m = ID.exec(attrs);
  return m === null ? '' : (m[1] ?? m[2] ?? m[3]!).trim();
}

/** The ids the string's `<use>` elements that show something refer to, and every id a url(#id) names. */
function usedIds(s: string): Set<string> {
  const out = new Set<string>();
  for (const m of s.matchAll(URL_REF)) out.add(m[1]!.trim());
  for (const m of s.matchAll(USE)) {
    const attrs = m[1] ?? '';
    const href = HREF.exec(attrs);
    if (href === null || hidingAttributes(attrs, 'use') || unpaintedSvgText(styleDeclarations(attrs))) continue;
    out.add((href[1] ?? href[2] ?? href[3]!).trim());
  }
  return out;
}
