/**
 * The declarations an element's attributes give it, by property, as the browser applies them: SVG's
 * presentation attributes (`transform="scale(0)"`), then its `style` attribute's declarations, the last of a
 * property winning. Read attribute by attribute and declaration by declaration, so text inside another
 * attribute's value or a CSS string (`title="transform:none"`, `content:";transform:none"`) declares nothing:
 * read over the whole tag, such a decoy after a hiding declaration hid it from the check.
 */
import { decodeReferences } from './html-references.js';
import { cssAsApplied } from './style-as-applied.js';
import { reduceCalc } from './style-calc.js';
import { someAttribute } from './tag-attributes.js';

/** Presentation attributes the hiding checks read (a style's declaration of the same property wins). */
const PRESENTATION = new Set(['transform', 'clip-path', 'clip', 'overflow', 'display', 'visibility', 'opacity', 'fill', 'fill-opacity', 'stroke', 'stroke-opacity', 'stroke-width']);
const IMPORTANT = /!\s*important\s*$/i;

export function styleDeclarations(attrs: string): Map<string, string> {
  const out = new Map<string, string>();
  let style: string | undefined;
  someAttribute(attrs, (name) => name === 'style' || PRESENTATION.has(name), (name, value) => {
    if (name === 'style') style ??= value; // the first one: a browser drops the others
    else out.set(name, clean(cssAsApplied(decodeReferences(value))));
    return false;
  });
  if (style !== undefined) declarations(decodeReferences(style), out);
  return out;
}

/** `css` split at each ";" outside strings, parentheses and comments; each declaration decoded and set. */
function declarations(css: string, out: Map<string, string>): void {
  let start = 0;
  let depth = 0;
  for (let i = 0; i < css.length; i++) {
    const c = css.charCodeAt(i);
    if (c === 0x5c) i++; // "\": the next character is escaped
    else if (c === 0x22 || c === 0x27) {
      const close = closing(css, i + 1, c);
      if (close < 0) return; // an unclosed string makes the rest of the declaration invalid: CSS drops it
      i = close;
    } else if (c === 0x2f && css.charCodeAt(i + 1) === 0x2a) {
      const end = css.indexOf('*/', i + 2);
      i = end < 0 ? css.length : end + 1;
    } else if (c === 0x28) depth++;
    else if (c === 0x29) depth -= depth > 0 ? 1 : 0;
    else if (c === 0x3b && depth === 0) {
      set(css.slice(start, i), out);
      start = i + 1;
    }
  }
  set(css.slice(start), out);
}

/** The index of the quote `q` closing a string begun at `from` (escapes skipped); -1 when none. */
function closing(css: string, from: number, q: number): number {
  for (let i = from; i < css.length; i++) {
    const c = css.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === q) return i;
  }
  return -1;
}

function set(declaration: string, out: Map<string, string>): void {
  const d = cssAsApplied(declaration);
  const colon = d.indexOf(':');
  if (colon > 0) out.set(d.slice(0, colon).trim().toLowerCase(), clean(d.slice(colon + 1)));
}

/** A value as the checks read it: `!important` dropped, lower case, each calc() that computes to one value replaced by it. */
function clean(value: string): string {
  return reduceCalc(value.replace(IMPORTANT, '').trim().toLowerCase());
}
