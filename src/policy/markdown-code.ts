/**
 * Markdown's code, which a renderer shows as written, markup included: fenced code blocks and code spans
 * (an HTML sample in an answer, a diff in a fence). A comment there is seen, not hidden: before
 * 2026-12-06 it was hidden text of kind markup all the same (strip cut it out of the sample).
 *
 * Read as CommonMark (GFM) reads code, and narrower wherever a renderer could take the text for HTML
 * instead (then the markup is hidden text, as before): a fence opens only outside an HTML block (a block
 * with a line that starts with "<", or a <pre>, <script>, <style>, <textarea>, "<?" or "<!" block, which
 * blank lines do not end); a code span lies on one line, within one table cell (no "|"), unescaped, and
 * none is looked for in a block past a "<" that could open a tag, a comment or an autolink outside code.
 */

/** A fence: up to three spaces, then three or more backticks (an info string without one) or tildes. */
const FENCE = /^ {0,3}(`{3,}|~{3,})([^\n]*)$/;
/** An HTML block that blank lines do not end (CommonMark's kinds 1, 3, 4, 5): group 1..4 say which. */
const RAW_START = /^ {0,3}<(?:(pre|script|style|textarea)(?=[\s>]|$)|(\?)|(![A-Za-z])|(!\[CDATA\[))/i;
const RAW_ENDS = [/<\/(?:pre|script|style|textarea)>/i, /\?>/, />/, /\]\]>/];
/** A line that starts with "<": an HTML block, or text a renderer may read as one. */
const HTML_LINE = /^ {0,3}</;
const BLANK = /^[ \t\r]*$/;
/** A "<" that may open raw HTML or an autolink (an e-mail one starts with almost anything): all but one before a space. */
const TAG_START = /<[^\s<>]/g;
const BACKTICKS = /`+/g;

/** [start, end) spans of code, in order, not overlapping. */
export type CodeSpans = Array<[number, number]>;

/** The fenced code blocks and code spans of `s`, in order (see the file comment); empty when it has none. */
export function markdownCode(s: string): CodeSpans {
  const out: CodeSpans = [];
  let fence: { char: string; length: number; start: number } | undefined;
  let raw: RegExp | undefined;
  let htmlBlock = false;
  let prose = -1; // where the prose block being read starts
  const flush = (end: number) => {
    if (prose >= 0 && !htmlBlock) codeSpans(s, prose, end, out);
    prose = -1;
  };
  for (let at = 0; at <= s.length; ) {
    const nl = s.indexOf('\n', at);
    const end = nl < 0 ? s.length : nl;
    const line = s.slice(at, end);
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length && BLANK.test(close[2]!)) {
        out.push([fence.start, end]);
        fence = undefined;
      }
    } else if (raw) {
      if (raw.test(line)) raw = undefined;
    } else if (BLANK.test(line)) {
      flush(at);
      htmlBlock = false;
    } else {
      const open = htmlBlock ? null : FENCE.exec(line);
      const started = RAW_START.exec(line);
      if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
        flush(at);
        fence = { char: open[1]![0]!, length: open[1]!.length, start: at };
      } else if (started) {
        htmlBlock = true;
        const ends = RAW_ENDS[started.findIndex((g, i) => i > 0 && g !== undefined) - 1]!;
        if (!ends.test(line.slice(started[0].length))) raw = ends;
      } else {
        if (HTML_LINE.test(line)) htmlBlock = true;
        if (prose < 0) prose = at;
      }
    }
    if (nl < 0) break;
    at = nl + 1;
  }
  if (fence) out.push([fence.start, s.length]);
  else flush(s.length);
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * The code spans of the prose in [from, to), pushed to `out`. Each opens and closes as CommonMark pairs
 * backtick runs; at the first one a renderer could read otherwise (a "<" before it that may open HTML,
 * a closer on another line or past a "|") none more are taken: what follows is read as HTML may be.
 */
function codeSpans(s: string, from: number, to: number, out: CodeSpans): void {
  const runs = backtickRuns(s, from, to);
  // Per length, the runs of that length and how far they were looked through: each is passed once.
  const byLength = new Map<number, { at: number[]; next: number }>();
  for (let i = 0; i < runs.length; i++) {
    const length = runs[i]![1];
    const list = byLength.get(length);
    if (list) list.at.push(i);
    else byLength.set(length, { at: [i], next: 0 });
  }
  let html = tagAfter(s, from, to);
  for (let i = 0; i < runs.length; i++) {
    let [start, length] = runs[i]!;
    if (escaped(s, start)) {
      start++;
      length--;
    }
    if (length === 0) continue;
    if (html < start) return;
    const list = byLength.get(length);
    while (list !== undefined && list.next < list.at.length && list.at[list.next]! <= i) list.next++;
    const close = list?.at[list.next];
    if (close === undefined) continue; // no closer: literal backticks, as in CommonMark
    const end = runs[close]![0];
    const between = s.slice(start + length, end);
    if (between.includes('\n') || between.includes('|')) return;
    out.push([start, end + length]);
    i = close;
    if (html < end) html = tagAfter(s, end + length, to);
  }
}

/** The maximal runs of backticks in [from, to): [start, length]. */
function backtickRuns(s: string, from: number, to: number): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  BACKTICKS.lastIndex = from;
  for (let m = BACKTICKS.exec(s); m !== null && m.index < to; m = BACKTICKS.exec(s)) runs.push([m.index, m[0].length]);
  return runs;
}

/** Whether the character at `at` is escaped: an odd number of backslashes before it. */
function escaped(s: string, at: number): boolean {
  let n = 0;
  while (at - n - 1 >= 0 && s.charCodeAt(at - n - 1) === 0x5c) n++;
  return n % 2 === 1;
}

/** Where the first "<" that may open HTML lies in [from, to); Infinity when none. */
function tagAfter(s: string, from: number, to: number): number {
  TAG_START.lastIndex = from;
  const m = TAG_START.exec(s);
  return m !== null && m.index < to ? m.index : Infinity;
}
