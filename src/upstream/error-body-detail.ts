/** How much of an upstream's error body a client is told (the rest is in no message). */
const DETAIL_CHARS = 200;
/** Configured values shorter than this are not secrets worth a hole in the message ("1", "json"). */
const SECRET_MIN_CHARS = 8;
/** An Authorization header's credentials as an error page echoes them. */
const SCHEME_CREDENTIALS = /\b(Bearer|Basic|DPoP|Token)(\s+)[A-Za-z0-9\-._~+/]+=*/gi;
/** A JWT anywhere (header, body, query). */
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/** An Authorization value's scheme, and the credentials after it (what an upstream echoes alone). */
const SCHEME_VALUE = /^(?:Bearer|Basic|DPoP|Token)\s+(\S.*)$/i;

/**
 * The start of an upstream's error body, as the client's error message quotes it, without the gateway's
 * credentials: a debug error page or an echo service answers with the request's headers, and those are
 * the gateway's to that upstream (its token, the configured `headers`: API keys), never the client's to
 * see. `sent`: the Authorization the refused request carried (see sentCredentials), whatever its token's
 * source; opaque, it is found by no pattern, only as itself. Redacted before it is cut, so no prefix of a
 * secret is left at the cut.
 */
export function errorBodyDetail(text: string, configured: Record<string, string> | undefined, sent?: string): string {
  let out = text.length > 16 * DETAIL_CHARS ? text.slice(0, 16 * DETAIL_CHARS) : text;
  if (sent !== undefined) out = redact(out, sent);
  if (configured) for (const value of Object.values(configured)) out = redact(out, value);
  out = out.replace(SCHEME_CREDENTIALS, '$1$2[redacted]').replace(JWT, '[redacted]');
  return out.slice(0, DETAIL_CHARS);
}

/** `text` without `value`, nor the credentials in it echoed alone or decoded (see secretsOf). */
export function redact(text: string, value: string): string {
  for (const secret of secretsOf(value)) text = blanked(text, secret);
  return text;
}

/** `text` without `secret` itself (none shorter than SECRET_MIN_CHARS: see there). */
export function blanked(text: string, secret: string): string {
  return secret.length >= SECRET_MIN_CHARS && text.includes(secret) ? text.split(secret).join('[redacted]') : text;
}

/**
 * The forms a sent `value` can be echoed in: itself; an Authorization value's credentials alone; and HTTP
 * Basic's decoded, as a server that names the client it refused writes them: `id:secret` and the secret
 * alone, each as sent (RFC 6749 §2.3.1 form-encodes each part) and form-decoded. Only the base64 form was redacted.
 */
export function secretsOf(value: string): string[] {
  const m = SCHEME_VALUE.exec(value);
  if (!m) return [value];
  const credentials = m[1]!;
  if (!/^basic\s/i.test(value)) return [value, credentials];
  const pair = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  if (colon < 0) return [value, credentials];
  const secret = pair.slice(colon + 1);
  const decoded = formDecoded(secret);
  return [value, credentials, pair, `${formDecoded(pair.slice(0, colon))}:${decoded}`, secret, decoded];
}

/** A form-encoded part as a server decodes it; as it is when it is no such thing. */
function formDecoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
