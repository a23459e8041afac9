/**
 * SVG text left unpainted by what it inherits: `fill`, `fill-opacity`, `stroke`, `stroke-opacity` and
 * `stroke-width` pass from an element to all it holds, so `<g fill-opacity="0"><text>…</text></g>` shows
 * nothing of its text, while the `<text>`'s own attributes show nothing that hides (hiding-attributes.ts
 * judges one tag). Before 2026-12-07 such text was found only when the text element itself was unpainted.
 * The element that gives the paint is what is found (its text, and shapes it leaves unpainted too), when
 * some SVG text in it, with what the elements between give and its own, is unpainted as
 * hiding-attributes.ts judges one tag (`unpaintedSvgText`). An element that does not itself unpaint text
 * (`fill="none"` with a `stroke`, as icon sets write) is not read further, and one that does is found only
 * with unpainted text inside: an icon `<svg fill="none">` whose paths paint themselves holds none.
 * Tags are read as hidden-markup.ts reads them, without a parser: a closing tag closes the nearest open
 * element of its name among the last few.
 */
import { unpaintedSvgText } from './hiding-attributes.js';
import { styleDeclarations } from './style-declarations.js';

/** Only an element whose attributes name one of these can unpaint what it holds (or hold a reference or an escape that decodes to one). */
const PAINTS = /fill|stroke|[&\\]/i;
const INHERITED = ['fill', 'fill-opacity', 'stroke', 'stroke-opacity', 'stroke-width'];
const SVG_TEXT = /^(?:text|tspan|textpath)$/i;
/** Any tag: group 1 its slash, 2 its name, 3 its attributes. */
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)([\s/][^<>]*)?>/g;
/** Elements that hold nothing, as hidden-markup.ts names them. */
const VOID = /^(?:area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr)$/i;
const SELF_CLOSING = /\/\s*$/;
/** How far down the open elements a closing tag looks for its own: a stray one costs this much, not the whole stack. */
const CLOSE_REACH = 8;

interface Open {
  name: string;
  /** The paint it holds: what it inherits, with its own over it (the parent's map when it sets none). */
  paint: Map<string, string>;
}

/** One string's elements judged for the paint they give: each part of the string read once, whatever the nesting. */
export class InheritedPaint {
  readonly #s: string;
  /** Where the last element read ends: an element inside it is not read again (see hides). */
  #readTo = -1;

  constructor(s: string) {
    this.#s = s;
  }

  /** Without allocating: whether an element with these attributes can unpaint what it holds. */
  static may(attrs: string): boolean {
    return PAINTS.test(attrs);
  }

  /**
   * Whether the element named `name` (lower case) whose tag (attributes `attrs`) ends at `after` leaves SVG
   * text in it unpainted. One inside an element read before is not read again: what that one gives is painted
   * less or as little as the defaults (fill none or faint, no stroke), so text it found painted is painted here too.
   */
  hides(name: string, attrs: string, after: number): boolean {
    // Self-closing (SVG's `<use … />`, `<g/>`) or void, it holds nothing: what follows is not inside it.
    if (after <= this.#readTo || SELF_CLOSING.test(attrs) || VOID.test(name)) return false;
    const own = styleDeclarations(attrs);
    if (!unpaintedSvgText(own)) return false;
    const open: Open[] = [];
    let hidden = false;
    TAG.lastIndex = after;
    for (let m = TAG.exec(this.#s); m !== null; m = TAG.exec(this.#s)) {
      const tag = m[2]!.toLowerCase();
      if (m[1] === '/') {
        const at = lastOpen(open, tag);
        if (at >= 0) open.length = at;
        else if (tag === name) {
          this.#readTo = TAG.lastIndex;
          return hidden;
        }
        continue;
      }
      const attributes = m[3] ?? '';
      const inherited = open.length === 0 ? own : open[open.length - 1]!.paint;
      const paint = PAINTS.test(attributes) ? over(inherited, styleDeclarations(attributes)) : inherited;
      if (!hidden && SVG_TEXT.test(tag)) hidden = unpaintedSvgText(paint);
      if (!SELF_CLOSING.test(attributes) && !VOID.test(tag)) open.push({ name: tag, paint });
    }
    this.#readTo = this.#s.length;
    return hidden;
  }
}

/** Where among the last CLOSE_REACH open elements the last named `name` is; -1 when none. */
function lastOpen(open: readonly Open[], name: string): number {
  for (let i = open.length - 1; i >= 0 && i >= open.length - CLOSE_REACH; i--) if (open[i]!.name === name) return i;
  return -1;
}

/** `inherited` with the inherited paint `mine` sets over it. */
function over(inherited: Map<string, string>, mine: Map<string, string>): Map<string, string> {
  const out = new Map(inherited);
  for (const k of INHERITED) {
    const v = mine.get(k);
    if (v !== undefined) out.set(k, v);
  }
  return out;
}
