/**
 * Whether a Content-Type header names JSON the gateway can read: the media type `application/json`
 * exactly (not a prefix: `application/jsonx` is another type), and no charset or UTF-8 (RFC 8259: JSON
 * exchanged between systems is UTF-8; a UTF-16 body must not be read as UTF-8). Parameters are parsed
 * per RFC 9110 (`;`-separated `name=value`, the value a token or a quoted string); a malformed one refuses.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === 'application/json') return true; // what nearly every client sends: no parsing
  const parts = header.split(';');
  if (parts[0]!.trim().toLowerCase() !== 'application/json') return false;
  for (const raw of parts.slice(1)) {
    const param = raw.trim();
    if (param === '') continue;
    const eq = param.indexOf('=');
    if (eq <= 0) return false;
    const name = param.slice(0, eq).trim().toLowerCase();
    let value = param.slice(eq + 1).trim();
    if (value.startsWith('"')) {
      if (value.length < 2 || !value.endsWith('"')) return false;
      value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    if (name === 'charset' && value.toLowerCase() !== 'utf-8') return false;
  }
  return true;
}
