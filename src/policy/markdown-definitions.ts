/**
 * Markdown's comments: a link reference definition no link uses (`[//]: # (…)`, `[comment]: <> "…"`, the
 * idiom Markdown guides give for a comment). A renderer shows nothing of a definition (its label, URL and
 * title only serve the links that name it), so one no link names hides all it holds from a person while a
 * model reads it, as an HTML comment does. Before 2026-12-07 it passed every action unless a pattern named it.
 *
 * Read as CommonMark reads a definition, and narrower wherever unsure (the text is then left as it is, as
 * before): one that begins the text, follows a blank line, a heading or another definition (a definition
 * cannot interrupt a paragraph: there it is text a person sees), outside code, its title well formed and
 * nothing after it on its line. A GFM footnote's (`[^1]: …`, to its paragraph's end) no `[^1]` names is one too:
 * GFM renderers show only the footnotes referred to. A definition counts as used when its label, bracketed,
 * appears anywhere else in the text (more than a renderer links, never less).
 */
import { markdownCode, type CodeSpans } from './markdown-code.js';

/**
 * A definition at a line's start: group 1 its label. Destination on its line or the next; a title in quotes
 * or parentheses after white space (on the next line too), then only white space to the line's end. Each
 * part has one way to match (negated classes, escapes apart), so a failed one is given up in one pass.
 */
const DEFINITION =
  /^ {0,3}\[((?:[^\\[\]]|\\[\s\S]){1,999})\]:[ \t]*(?:\r?\n[ \t]*)?(?:<(?:[^<>\n\\]|\\.)*>|[^\s<]\S*)(?:(?:[ \t]+|[ \t]*\r?\n[ \t]*)("(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*'|\((?:[^()\\]|\\[\s\S])*\)))?[ \t]*(?:\r?\n|$)/gm;
/** A bracketed text: where a link may name a definition (`[text][label]`, `[label][]`, `[label]`). */
const BRACKETED = /\[((?:[^\\[\]]|\\[\s\S])*)\]/g;
/** A line a definition may follow: blank, or an ATX heading (a block that ends on its line). */
const BLOCK_BEFORE = /^(?:[ \t\r]*|[ ]{0,3}#{1,6}(?:[ \t][^\n]*)?)$/;
const BLANK_LINE = /\n[ \t\r]*\n/;
/** A GFM footnote's definition at a line's start: group 1 its label (no white space in it). */
const FOOTNOTE = /^ {0,3}\[\^([^\s\\[\]]{1,999})\]:/gm;
/** The first blank line after a footnote's first line. */
const BLANK_AFTER = /\n[ \t\r]*(?:\n|$)/g;

/** How many unused definitions a string holds, and the string without them. */
export interface DefinitionScan {
  count: number;
  clean: string;
}

/** One test per string, no allocation: only text with "]:" can hold a definition. */
export function mayHoldDefinition(s: string): boolean {
  return s.includes(']:');
}

/** A label as CommonMark matches it: case folded, white space collapsed. */
function normal(label: string): string {
  return label.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** Whether the definition at `at` may begin a block there: the text's start, after a blank line, a heading or the previous definition (`end`). */
function beginsBlock(s: string, at: number, end: number): boolean {
  if (at === 0 || at === end) return true;
  // Only a line feed ends a line for Markdown (the expression's ^ also follows U+2028, a carriage return).
  if (s.charCodeAt(at - 1) !== 10) return false;
  const from = s.lastIndexOf('\n', at - 2) + 1;
  return BLOCK_BEFORE.test(s.slice(from, at - 1));
}


type Span = { start: number; end: number; label: string };

/** Link reference definitions and footnote definitions, in order of their start (they may overlap). */
function candidates(s: string): Span[] {
  const out: Span[] = [];
  DEFINITION.lastIndex = 0;
  for (let m = DEFINITION.exec(s); m !== null; m = DEFINITION.exec(s)) {
    const label = m[1]!;
    if (!label.startsWith('^') && normal(label) !== '' && !BLANK_LINE.test(m[0])) out.push({ start: m.index, end: m.index + m[0].length, label: normal(label) });
  }
  FOOTNOTE.lastIndex = 0;
  let blank = -1; // the first blank line after the footnote before (the same for each footnote before it: linear)
  for (let m = FOOTNOTE.exec(s); m !== null; m = FOOTNOTE.exec(s)) {
    if (blank < m.index) {
      BLANK_AFTER.lastIndex = m.index;
      blank = BLANK_AFTER.exec(s)?.index ?? s.length;
    }
    // Its text runs to the paragraph's end: lines after it continue it lazily up to a blank line.
    out.push({ start: m.index, end: Math.min(blank + 1, s.length), label: normal(`^${m[1]!}`) });
  }
  return out.length < 2 ? out : out.sort((a, b) => a.start - b.start);
}

/** The definitions of `s` as spans with their normal labels (see the file comment). */
function definitions(s: string): Span[] {
  const out: Span[] = [];
  let code: CodeSpans | undefined;
  let k = 0; // the first code span not yet passed (definitions come in order)
  let last = -1;
  for (const d of candidates(s)) {
    if (d.start < last || !beginsBlock(s, d.start, last)) continue; // inside the one before, or not a block's start
    code ??= s.includes('`') || s.includes('~~~') ? markdownCode(s) : [];
    while (k < code.length && code[k]![1] <= d.start) k++;
    if (k < code.length && code[k]![0] <= d.start) continue;
    out.push(d);
    last = d.end;
  }
  return out;
}

/** The definitions of `s` that no bracketed text elsewhere names, counted and removed; undefined when it has none. */
export function unusedDefinitions(s: string): DefinitionScan | undefined {
  const found = definitions(s);
  if (found.length === 0) return undefined;
  const used = new Set<string>();
  let from = 0;
  for (const d of [...found, { start: s.length, end: s.length }]) {
    const between = s.slice(from, d.start);
    for (const m of between.matchAll(BRACKETED)) used.add(normal(m[1]!));
    from = d.end;
  }
  let clean = '';
  let count = 0;
  from = 0;
  for (const d of found) {
    if (used.has(d.label)) continue;
    clean += s.slice(from, d.start);
    from = d.end;
    count++;
  }
  return count === 0 ? undefined : { count, clean: clean + s.slice(from) };
}
