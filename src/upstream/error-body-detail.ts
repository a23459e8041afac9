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

/** `text` without `value`, nor (an Authorization value) the credentials in it echoed alone. */
export function redact(text: string, value: string): string {
  const credentials = SCHEME_VALUE.exec(value)?.[1];
  for (const secret of credentials === undefined ? [value] : [value, credentials]) {
    if (secret.length >= SECRET_MIN_CHARS && text.includes(secret)) text = text.split(secret).join('[redacted]');
  }
  return text;
}
