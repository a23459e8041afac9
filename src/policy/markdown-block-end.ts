/**
 * Where the Markdown block holding a point ends, as CommonMark reads it, for an unclosed element a renderer's
 * closing tag closes (hidden-markup.ts): a paragraph's "</p>", a tight list item's "</li>", a heading's "</h1>".
 * When unsure, later: an end too late strips visible text, one too early leaves hidden text to a model.
 */

/** A line's container markers: quote markers (`>`) and list markers, in order (group 1: a list marker's). */
const MARKER = /^ {0,3}(?:>[ \t]?|([-+*]|\d{1,9}[.)])(?:[ \t]+|$))/;
const ATX = /^ {0,3}#{1,6}(?:[ \t]|$)/;
/** Lines that end a paragraph whatever contains it (a lazy line too): a heading, a quote, a fence, a non-empty bullet or "1." item, a thematic break. */
const ENDS = /^ {0,3}(?:#{1,6}(?:[ \t]|$)|>|`{3,}|~{3,}|[-+*][ \t]+\S|1[.)][ \t]+\S|(?:[-*_][ \t]*){3,}$)/;
/** A setext underline: ends a paragraph it is a line of (not a lazy one). */
const SETEXT = /^ {0,3}(?:=+|-+)[ \t]*$/;
/** Any non-empty item: below a list item's indentation, one ends it (a sibling or an outer item). */
const ITEM = /^ {0,3}(?:[-+*]|\d{1,9}[.)])[ \t]+\S/;
const BLANK = /^[ \t\r]*$/;
const FENCE = /^ {0,3}(?:`{3,}|~{3,})/;
const QUOTE = /^ {0,3}>[ \t]?/;

interface Container {
  kind: 'paragraph' | 'quote' | 'item' | 'heading';
  /** A quote's depth (its markers), an item's content indentation. */
  size: number;
}

/** The index where the block holding `at` (its line running on past `after`) ends: at a line's "\n", or `s.length`. */
export function markdownBlockEnd(s: string, at: number, after: number): number {
  const start = s.lastIndexOf('\n', at - 1) + 1;
  const container = containerOf(s, start, at);
  if (container === undefined) return s.length;
  let end = s.indexOf('\n', after);
  if (container.kind === 'heading') return end < 0 ? s.length : end;
  while (end >= 0) {
    const next = s.indexOf('\n', end + 1);
    if (endsBlock(s.slice(end + 1, next < 0 ? s.length : next), container)) return end;
    end = next;
  }
  return s.length;
}

/** What holds the paragraph with `at`: read from its nearest line above (or its own) that opens a quote or an item; undefined when unsure. */
function containerOf(s: string, start: number, at: number): Container | undefined {
  const first = markers(s.slice(start, at));
  if (ATX.test(first.rest)) return { kind: 'heading', size: 0 };
  for (let line = start, m = first; ; ) {
    if (m.quotes > 0) return m.items > 0 ? undefined : { kind: 'quote', size: m.quotes };
    if (m.items > 0) return { kind: 'item', size: m.indent };
    if (line === 0) return { kind: 'paragraph', size: 0 };
    const above = s.lastIndexOf('\n', line - 2) + 1;
    const text = s.slice(above, line - 1);
    if (BLANK.test(text)) return { kind: 'paragraph', size: 0 };
    line = above;
    m = markers(text);
    if (FENCE.test(m.rest)) return undefined; // lines above may be code, which only looks like a list or a quote

  }
}

/** A line's quote markers and list markers, the indentation of what follows them, and that rest. */
function markers(line: string): { quotes: number; items: number; indent: number; rest: string } {
  let quotes = 0;
  let items = 0;
  let indent = 0;
  for (let m = MARKER.exec(line); m !== null && m[0] !== ''; m = MARKER.exec(line)) {
    if (m[1] !== undefined) items++;
    else quotes++;
    indent += m[0].length;
    line = line.slice(m[0].length);
  }
  return { quotes, items, indent, rest: line };
}

/** Whether `line` ends the container's paragraph (and, with it, the element). */
function endsBlock(line: string, c: Container): boolean {
  if (BLANK.test(line)) return true;
  if (c.kind === 'paragraph') return ENDS.test(line) || SETEXT.test(line);
  if (c.kind === 'item') {
    const indent = line.length - line.trimStart().length;
    return indent < c.size && (ENDS.test(line) || ITEM.test(line));
  }
  let depth = 0;
  for (let m = QUOTE.exec(line); m !== null; m = QUOTE.exec(line)) {
    depth++;
    line = line.slice(m[0].length);
  }
  if (depth === 0) return ENDS.test(line); // a lazy line, or one that ends the quote
  // Less deep, a line of text is lazy (it goes on), and a setext underline is text.
  return BLANK.test(line) || ENDS.test(line) || (depth === c.size && SETEXT.test(line));
}
