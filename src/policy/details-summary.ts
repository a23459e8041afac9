/**
 * A closed `<details>` a reader cannot open: its summary (the first `<summary>` it holds) is hidden, so no toggle
 * shows, and all it holds is unseen while a model reads it. Before 2026-12-07 every closed `<details>` was left as
 * one a reader opens (its summary, or a browser's own "Details" where it has none, is a control like a link).
 * The summary is looked for up to the next `<details>` tag, opening or closing: a nested one is its own, and after
 * the closing tag none is this one's. Each stretch is read once (`#readTo`): linear in the text however many there are.
 */
import { hidingAttributes } from './hiding-attributes.js';
import { hasAttribute } from './tag-attributes.js';

/** A comment, passed over whole, or a tag: group 1 its slash, 2 its name, 3 its attributes (quoted values to their closing quote, as hidden-markup.ts reads them). */
const WALK = /<!--[\s\S]*?(?:--!?>|$)|<(\/?)([a-zA-Z][a-zA-Z0-9-]*)([\s/](?:[^<>"'=]|=\s*(?:"[^"]*"|'[^']*'|(?![\s"']))|["'])*)?>/g;
/** Elements whose text is raw: a "<summary>" written in a script is none. */
const RAW = /^(?:script|style|textarea|title|xmp|iframe|noembed|noframes|noscript)$/i;
const RAW_END = /<\/([a-zA-Z][a-zA-Z0-9-]*)(?=[\s/>])[^<>]*>/g;

export class UnopenableDetails {
  readonly #s: string;
  /** Where the last walk ended: a <details> before it lies in text already read (a disagreement on what is a tag), left. */
  #readTo = -1;

  constructor(s: string) {
    this.#s = s;
  }

  /** Whether an element so named, with these attributes, can be one: a <details> not open (without allocating). */
  static may(name: string, attrs: string): boolean {
    return name.length === 7 && name.toLowerCase() === 'details' && !hasAttribute(attrs, 'open');
  }

  /** Whether the <details> whose tag ends at `after` holds a hidden summary before any other <details> tag. */
  hides(after: number): boolean {
    if (after < this.#readTo) return false;
    const s = this.#s;
    WALK.lastIndex = after;
    for (let m = WALK.exec(s); m !== null; m = WALK.exec(s)) {
      const name = m[2];
      if (name === undefined) continue; // a comment
      this.#readTo = WALK.lastIndex;
      const lower = name.toLowerCase();
      if (lower === 'details') return false;
      if (m[1] === '/') continue;
      if (lower === 'summary') return hidingAttributes(m[3] ?? '', name);
      if (RAW.test(lower) && !this.#pastRaw(lower)) return false;
    }
    this.#readTo = s.length;
    return false;
  }

  /** Past the raw text of `name`, opened at WALK.lastIndex, to its closing tag; false when it has none. */
  #pastRaw(name: string): boolean {
    RAW_END.lastIndex = WALK.lastIndex;
    for (let m = RAW_END.exec(this.#s); m !== null; m = RAW_END.exec(this.#s)) {
      if (m[1]!.toLowerCase() !== name) continue;
      WALK.lastIndex = this.#readTo = RAW_END.lastIndex;
      return true;
    }
    this.#readTo = this.#s.length;
    return false;
  }
}
