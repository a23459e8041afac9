/**
 * Text payloads in a charset other than UTF-8 (`text/plain; charset=utf-16`): decoded as that charset
 * says, as a host decodes them for its model. Read as UTF-8, UTF-16 text is a NUL between letters, and
 * its tag characters were never seen (before 2026-12-06).
 */

/** A payload's text; `encode` makes bytes of the same charset again, absent when that cannot be done faithfully. */
export interface Decoded {
  text: string;
  /** Bytes that did not decode (read as U+FFFD), or a charset the gateway cannot encode: scanned, not cleaned. */
  lossy: boolean;
  encode?: ((text: string) => Buffer) | undefined;
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/** The WHATWG encoding a mimeType's charset parameter names; undefined when absent, UTF-8 or unknown (read as UTF-8). */
export function charsetOf(mimeType: string): string | undefined {
  const m = CHARSET.exec(mimeType);
  if (m === null) return undefined;
  let encoding: string;
  try {
    encoding = new TextDecoder(m[1]!.toLowerCase()).encoding;
  } catch {
    return undefined;
  }
  return encoding === 'utf-8' ? undefined : encoding;
}

const LE = (text: string): Buffer => Buffer.from(text, 'utf16le');
const BE = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16();

/**
 * `bytes` decoded as `encoding`. UTF-16 goes by its byte-order mark when it has one (as a host's
 * decoder does: "utf-16" alone is little-endian by the WHATWG label, big-endian text carries FE FF),
 * which stays in the text (a leading U+FEFF is no finding) and so in what is encoded again.
 */
export function decodeAs(bytes: Buffer, encoding: string): Decoded {
  let enc = encoding;
  let encode: Decoded['encode'];
  if (enc === 'utf-16le' || enc === 'utf-16be') {
    if (bytes[0] === 0xfe && bytes[1] === 0xff) enc = 'utf-16be';
    else if (bytes[0] === 0xff && bytes[1] === 0xfe) enc = 'utf-16le';
    encode = enc === 'utf-16be' ? BE : LE;
  }
  try {
    return { text: new TextDecoder(enc, { fatal: true, ignoreBOM: true }).decode(bytes), lossy: encode === undefined, encode };
  } catch {
    return { text: new TextDecoder(enc, { ignoreBOM: true }).decode(bytes), lossy: true };
  }
}
