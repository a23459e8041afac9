import { z } from 'zod';

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Static headers the gateway sends (a remote upstream's, an embeddings service's), as the HTTP client
 * takes them: a value with a line break or another control character (a secret read from a file often
 * ends in a newline) was accepted, and every request then failed at the client ("invalid authorization
 * header"), the upstream restarting for ever. The value is never quoted: it may be a secret.
 */
export const sentHeaders = z
  .record(z.string(), z.string().regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'a header value without line breaks or control characters (a secret read from a file may end in a newline)'))
  .superRefine((h, ctx) => {
    for (const k of Object.keys(h)) if (!HEADER_NAME.test(k)) ctx.addIssue({ code: 'custom', path: [k], message: 'not an HTTP header name (letters, digits, "-")' });
  })
  .default({});
