import { clipped } from '../observability/clipped.js';
import { shown, type HiddenKind, type HiddenTextScanner, type TextScan } from './hidden-text.js';
import { charsetOf, decodeAs, type Decoded } from './charsets.js';
import { acrossItems } from './hidden-text-joined.js';
import type { MarkupKind } from './hidden-markup.js';

/** Hidden text of one kind in one field: where (a path such as "inputSchema.properties.city.description"), how much. Never the text. */
export interface Finding {
  kind: HiddenKind;
  path: string;
  count: number;
  /** A summary of the fields past MAX_FINDINGS holding this kind: how many (absent: the one field at `path`). */
  fields?: number;
}

/**
 * Fields listed one by one; past them, one summary per kind. The findings go to audit lines, the
 * SWB_HIDDEN_TEXT_BLOCKED error and pending pins: unbounded, an answer of one zero-width space per field
 * under long member names made a finding of up to 4 kB per 6 bytes (a 2 MB answer exhausted the heap).
 */
export const MAX_FINDINGS = 100;
/** A path longer than this is cut (64 levels of 64-character names would be 4 kB). */
const MAX_PATH = 256;

export interface Walked {
  findings: Finding[];
  /** The value with hidden text removed: the same object when nothing was found. */
  clean: unknown;
  /** Some hidden text sits where removing it would change what the upstream matches on (see walkDefinition). */
  stuck: boolean;
}

/** Nesting walked member by member; a deeper subtree is scanned as its JSON text. */
export const MAX_DEPTH = 64;
/** Never model-facing text: metadata. */
const META = '_meta';
/** Members that carry base64 payloads (an image's or audio's `data`, a resource's `blob`). */
const PAYLOADS = new Set(['data', 'blob']);
/**
 * A base64 (or base64url) string: long, and the string itself cannot hide a character (what it decodes
 * to can: see Walk.#payload). Only such a string is treated as a payload under `data` or `blob`: skipped
 * whatever it held, a parameter named `data` in a tool's schema or a `structuredContent.data` object
 * (GraphQL's shape) went unscanned.
 */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const skipped = (key: string, value: unknown): boolean => key === META || (PAYLOADS.has(key) && typeof value === 'string' && BASE64.test(value));
/** The ASCII whitespace atob (and Buffer) skip inside base64: a payload in lines (MIME, the base64 CLI) is read whole. */
const WRAPS = /[\t\n\f\r ]+/g;
/**
 * A `data` or `blob` string that is base64 only once its line breaks are gone. Not skipped (it might be
 * plain words, which the walk scans), but a host decodes it whole like any payload: without this second
 * look, wrapping a text blob in lines carried its hidden text past strip and block.
 */
const wrappedPayload = (key: string, value: unknown): value is string => PAYLOADS.has(key) && typeof value === 'string' && /[\t\n\f\r ]/.test(value) && BASE64.test(value.replace(WRAPS, ''));
/**
 * Media types whose payload is text a host may decode and hand to a model (a resource's `blob` of
 * text/plain is still text): such a payload is scanned decoded, not skipped. An absent type counts too
 * (a host guesses it); images, audio, video and other binary types are left alone, but SVG, which is XML
 * (its <text>, <desc> and <title> are text a model reads, and hidden ones are markup): before 2026-12-06
 * skipped as an image.
 */
const TEXTUAL = /^(?:text\/|image\/svg\+xml\b|application\/(?:[\w.-]+\+)?(?:json|xml|yaml|x-yaml|javascript|ecmascript|sql|graphql|toml|x-sh|x-www-form-urlencoded)\b)/i;
/** Media types rendered as markup, not Markdown: a fence or backticks there hold no code, and a comment in them is hidden. */
const MARKUP_TYPES = /^(?:text\/html|application\/xhtml\+xml|image\/svg\+xml|(?:application|text)\/(?:[\w.-]+\+)?xml)\b/i;
/** Of those, the ones a browser renders as a page (elements it never shows, a <title>, a <noscript>, hide their text). */
const PAGE_TYPES = /^(?:text\/html|application\/xhtml\+xml|image\/svg\+xml)\b/i;
/** How text of this type is read: as Markdown (false), a page ('html'), or other XML ('xml': an RSS item's <title> is what a reader shows). */
const readsAsMarkup = (mimeType: unknown): MarkupKind => (typeof mimeType === 'string' && MARKUP_TYPES.test(mimeType.trim()) ? (PAGE_TYPES.test(mimeType.trim()) ? 'html' : 'xml') : false);
const readsAsText = (mimeType: unknown): boolean => mimeType === undefined || (typeof mimeType === 'string' && TEXTUAL.test(mimeType.trim()));
/** Decodes fatally: untyped bytes that are not UTF-8 are no text (a host guessing the type reads them as binary). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/**
 * Decodes as a host does a payload declared text (TextDecoder's default, Buffer's toString): a byte that
 * is not UTF-8 becomes U+FFFD and the rest is read. Decoded fatally, one stray 0xFF byte at its end
 * carried a text/plain blob's hidden text past strip and block.
 */
const LENIENT = new TextDecoder('utf-8', { ignoreBOM: true });
const UTF8_BYTES = (text: string): Buffer => Buffer.from(text, 'utf8');

/**
 * A base64 payload's bytes as UTF-8 text, or undefined when they are not text. `lossy`: declared text
 * whose bytes are not all UTF-8, decoded leniently: it can be scanned, not cleaned (re-encoded, the bytes
 * that are not UTF-8 would be changed: a mislabelled binary corrupted in silence), so strip withholds it.
 * A `charset` other than UTF-8 is decoded as it says (see charsets.ts).
 */
function decodedText(payload: string, declared: boolean, charset: string | undefined): Decoded | undefined {
  const bytes = Buffer.from(payload, 'base64');
  if (charset !== undefined) return decodeAs(bytes, charset);
  try {
    return { text: UTF8.decode(bytes), lossy: false };
  } catch {
    return declared ? { text: LENIENT.decode(bytes), lossy: true } : undefined;
  }
}
/**
 * Members whose value is JSON data (a schema, a tool's structured result), not protocol objects: a `_meta`
 * inside them is a member like any other (an argument named _meta, a field of the result) that a model
 * reads, so it is scanned. Skipped there too, hidden text under that name passed strip and block. A
 * `data` or `blob` in them is a payload only beside a `mimeType` (see walkResult's `data`).
 */
const DATA = new Set(['inputSchema', 'outputSchema', 'structuredContent']);
/** Members of a definition the upstream matches calls on: a tool's or argument's name, a template. */
const IDENTIFIERS = new Set(['name', 'uri', 'uriTemplate']);
const KINDS: readonly HiddenKind[] = ['tag', 'bidi', 'invisible', 'markup', 'image', 'pattern'];

/** An own member whatever its name ("__proto__" from a parsed message is data, not the prototype). */
function put(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

class Walk {
  readonly findings: Finding[] = [];
  stuck = false;
  /** Per kind, the fields past MAX_FINDINGS and their characters. */
  readonly #more = new Map<HiddenKind, { fields: number; count: number }>();
  readonly #scanner: HiddenTextScanner;
  /** Definitions: names and property names cannot be changed (the upstream would not know them). */
  readonly #fixedNames: boolean;
  readonly #path: Array<string | number> = [];
  /** Inside a DATA member, or a walk of data (walkResult's `data`): `_meta` is data there. */
  #inData: boolean;
  /** A member of an object declared HTML or XML (its mimeType): its text is read as markup, not Markdown. */
  #html: MarkupKind = false;

  constructor(scanner: HiddenTextScanner, fixedNames: boolean, data = false) {
    this.#scanner = scanner;
    this.#fixedNames = fixedNames;
    this.#inData = data;
  }

  /** The path as a reader would write it; hidden characters in keys left out, long keys cut. */
  #where(suffix = ''): string {
    let out = '';
    for (const p of this.#path) out += typeof p === 'number' ? `[${p}]` : out === '' ? shown(p) : `.${shown(p)}`;
    return out + suffix;
  }

  #record(scan: TextScan, suffix?: string): void {
    // No path made for a field that will not be listed: that is where the memory went.
    const path = this.findings.length < MAX_FINDINGS ? clipped(this.#where(suffix), MAX_PATH) : '';
    for (const kind of KINDS) if (scan.counts[kind] !== 0) this.count(kind, path, scan.counts[kind]);
  }

  /** A finding: listed, or past MAX_FINDINGS summed up in its kind's summary. */
  count(kind: HiddenKind, path: string, count: number): void {
    if (this.findings.length < MAX_FINDINGS) {
      this.findings.push({ kind, path, count });
      return;
    }
    const more = this.#more.get(kind) ?? { fields: 0, count: 0 };
    more.fields += 1;
    more.count += count;
    this.#more.set(kind, more);
  }

  /** The findings listed, then a summary per kind of the fields past them. */
  done(clean: unknown): Walked {
    const findings = this.findings;
    for (const [kind, { fields, count }] of this.#more) findings.push({ kind, path: `(${fields} more field${fields === 1 ? '' : 's'})`, count, fields });
    return { findings, clean, stuck: this.stuck };
  }

  #string(s: string, fixed: boolean, suffix?: string): string {
    const scan = this.#scanner.scan(s, this.#html);
    if (!scan) return s;
    this.#record(scan, suffix);
    if (fixed) {
      this.stuck = true;
      return s;
    }
    return scan.clean;
  }

  value(v: unknown, depth: number, fixed = false): unknown {
    if (typeof v === 'string') return this.#string(v, fixed);
    if (v === null || typeof v !== 'object') return v;
    if (depth >= MAX_DEPTH) return this.#deep(v);
    if (Array.isArray(v)) return this.#array(v, depth);
    return this.#object(v as Record<string, unknown>, depth);
  }

  #array(v: unknown[], depth: number): unknown[] {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      this.#path.push(i);
      const r = this.value(v[i], depth + 1);
      this.#path.pop();
      if (r !== v[i]) (out ??= v.slice())[i] = r;
    }
    return out ?? v;
  }

  #object(v: Record<string, unknown>, depth: number): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(v);
    const outer = this.#html;
    const html = readsAsMarkup(v.mimeType);
    this.#html = html;
    // In JSON data (a structured result, a schema, a log line) no host decodes an untyped `data`: read as
    // base64, "GET" there decoded to control characters and was found as invisible (before 2026-12-06).
    const payloads = !this.#inData || v.mimeType !== undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key === META ? !this.#inData : payloads && skipped(key, v[key])) {
        const payload = key === META ? v[key] : this.#payload(key, v[key] as string, v.mimeType);
        if (payload !== v[key] && !out) {
          out = {};
          for (let j = 0; j < i; j++) put(out, keys[j]!, v[keys[j]!]);
        }
        if (out) put(out, key, payload);
        continue;
      }
      this.#path.push(key);
      const cleanKey = this.#string(key, this.#fixedNames, ' (name)');
      const entersData = !this.#inData && DATA.has(key);
      if (entersData) this.#inData = true;
      let r = this.value(v[key], depth + 1, this.#fixedNames && IDENTIFIERS.has(key));
      this.#html = html; // a member object read its own
      if (entersData) this.#inData = false;
      this.#path.pop();
      // Scanned as text above; as the text it decodes to here (cleaned: encoded again, in one line).
      if (r === v[key] && payloads && wrappedPayload(key, r)) r = this.#payload(key, r, v.mimeType);
      if (!out && r === v[key] && cleanKey === key) continue;
      if (!out) {
        // Copied up to here, in order: a renamed key keeps its place.
        out = {};
        for (let j = 0; j < i; j++) put(out, keys[j]!, v[keys[j]!]);
      }
      put(out, cleanKey, r);
    }
    this.#html = outer;
    return out ?? v;
  }

  /**
   * A base64 payload (`data`, `blob`): skipped unless its media type says text, when it is scanned as the
   * text it decodes to (base64 hides tag characters from a scan of the string as well as from a person)
   * and, cleaned, encoded again.
   */
  #payload(key: string, payload: string, mimeType: unknown): string {
    if (!readsAsText(mimeType)) return payload;
    const charset = typeof mimeType === 'string' ? charsetOf(mimeType) : undefined;
    const decoded = decodedText(payload, mimeType !== undefined, charset);
    // Untyped bytes with a NUL are binary to a host that guesses (as to file(1) and git), never text it gives a model.
    if (decoded === undefined || (mimeType === undefined && decoded.text.includes('\0'))) return payload;
    const text = decoded.text;
    this.#path.push(key);
    const clean = this.#string(text, decoded.lossy, ' (base64-decoded)');
    this.#path.pop();
    if (clean === text) return payload;
    return (decoded.encode ?? UTF8_BYTES)(clean).toString('base64');
  }

  /** Deeper than MAX_DEPTH: the subtree's JSON text (hidden characters are never escaped there), scanned as one string. */
  #deep(v: object): unknown {
    let text: string;
    try {
      text = JSON.stringify(v);
    } catch {
      this.stuck = true;
      return v;
    }
    const scan = this.#scanner.scan(text);
    if (!scan) return v;
    this.#record(scan, ' (nested too deep: scanned as JSON)');
    if (this.#fixedNames) {
      this.stuck = true;
      return v;
    }
    try {
      return JSON.parse(scan.clean) as unknown;
    } catch {
      // A pattern match spanned JSON syntax: no clean copy can be made.
      this.stuck = true;
      return v;
    }
  }
}

/**
 * A tool, prompt or resource-template definition, every member but _meta: its hidden text, and a copy
 * without it. A name, a URI template or a property name with hidden text makes it `stuck`: the upstream
 * matches calls on those, so they cannot be cleaned, only blocked.
 */
export function walkDefinition(scanner: HiddenTextScanner, definition: Record<string, unknown>): Walked {
  const w = new Walk(scanner, true);
  return w.done(w.value(definition, 0));
}

/**
 * A result (tools/call, prompts/get, resources/read), every member but _meta and base64 payloads: keys are
 * cleaned too. Then the patterns across adjacent text items, on their cleaned text (see acrossItems).
 * `data`: the result is free-form JSON a host shows as it is (a log line's data), read as a DATA member
 * is: a `data` or `blob` is a payload only beside a `mimeType` (a content block or resource logged as it
 * was): no host decodes any other, and read as base64, a word ("GET") decoded to control characters,
 * found as invisible and replaced by strip (before 2026-12-06); and a `_meta` in it is a member a model
 * reads, scanned (before 2026-12-06 skipped as the protocol's, so hidden text under it passed).
 */
export function walkResult(scanner: HiddenTextScanner, result: Record<string, unknown>, data = false): Walked {
  const w = new Walk(scanner, false, data);
  const joined = acrossItems(scanner, w.value(result, 0));
  for (const f of joined.found) w.count('pattern', f.path, f.count);
  return w.done(joined.clean);
}
