/** How much of an upstream's error body a client is told (the rest is in no message). */
const DETAIL_CHARS = 200;
/** Configured values shorter than this are not secrets worth a hole in the message ("1", "json"). */
const SECRET_MIN_CHARS = 8;
/** An Authorization header's credentials as an error page echoes them. */
const SCHEME_CREDENTIALS = /\b(Bearer|Basic|DPoP|Token)(\s+)[A-Za-z0-9\-._~+/]+=*/gi;
/** A JWT anywhere (header, body, query). */
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/**
 * The start of an upstream's error body, as the client's error message quotes it, without the gateway's
 * credentials: a debug error page or an echo service answers with the request's headers, and those are
 * the gateway's to that upstream (its token, the configured `headers`: API keys), never the client's to
 * see. Redacted before it is cut, so no prefix of a secret is left at the cut.
 */
export function errorBodyDetail(text: string, configured: Record<string, string> | undefined): string {
  let out = text.length > 16 * DETAIL_CHARS ? text.slice(0, 16 * DETAIL_CHARS) : text;
  if (configured) {
    for (const value of Object.values(configured)) {
      if (value.length >= SECRET_MIN_CHARS && out.includes(value)) out = out.split(value).join('[redacted]');
    }
  }
  out = out.replace(SCHEME_CREDENTIALS, '$1$2[redacted]').replace(JWT, '[redacted]');
  return out.slice(0, DETAIL_CHARS);
}
