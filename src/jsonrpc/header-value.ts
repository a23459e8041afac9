/**
 * Values of the 2026-07-28 request headers (`Mcp-Name`, `Mcp-Param-*`) as the spec defines them: plain
 * visible ASCII, or `=?base64?…?=` (UTF-8) for anything that is not safe as a header value. The gateway
 * compares them with the body after decoding; a value that is neither is malformed.
 */

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/**
 * Visible ASCII, space and tab (RFC 9110 field-value characters), no leading or trailing whitespace.
 * A loop over the characters rather than a regular expression: every 2026-07-28 request has two such
 * headers checked (Mcp-Method, Mcp-Name), and for their short values the expression's call was several
 * times the cost of the scan (callgrind, one call in flight).
 */
function isPlain(v: string): boolean {
  const n = v.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0x21 && c <= 0x7e) continue;
    // Space and tab only inside the value.
    if ((c === 0x20 || c === 0x09) && i !== 0 && i !== n - 1) continue;
    return false;
  }
  return true;
}

/** The decoded value, or undefined when the header is malformed (bad characters or bad base64). */
export function decodeHeaderValue(raw: string): string | undefined {
  // Only a value that starts as the sentinel does can be one (`=` then `?`).
  if (raw.charCodeAt(0) === 0x3d && raw.charCodeAt(1) === 0x3f) {
    const m = SENTINEL.exec(raw);
    if (m) {
      const bytes = Buffer.from(m[1]!, 'base64');
      // Buffer.from is lenient: re-encoding must give the same text, or the base64 was not canonical.
      if (bytes.toString('base64') !== m[1]) return undefined;
      const text = bytes.toString('utf8');
      return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
    }
    // The sentinel's shape with a body that is not base64 is malformed; without its suffix it is plain text.
    if (raw.startsWith('=?base64?') && raw.endsWith('?=')) return undefined;
  }
  return raw === '' || isPlain(raw) ? raw : undefined;
}

/** How a value travels in a header: as is when plain and unambiguous, else base64 (what an upstream is sent). */
export function encodeHeaderValue(value: string): string {
  const ambiguous = value.startsWith('=?base64?') && value.endsWith('?=');
  if (isPlain(value) && !ambiguous) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
