import { z } from 'zod';

/**
 * An entry of server.allowedOrigins, as a browser's Origin header spells it: the serialized origin
 * (scheme://host[:port], lower case, the scheme's default port left out, no slash), `*` for any, or `null`
 * (a sandboxed frame or a file: page). The guard compares the header with the entries as strings, so
 * `https://App.example.com/` as written never matched and refused every browser request with 403; each
 * entry is now put in that form at load, and one that is no origin (a path, a query, credentials) is a
 * problem check-config names.
 */
export const browserOrigin = z.string().transform((s, ctx) => {
  if (s === '*' || s === 'null') return s;
  const url = URL.canParse(s) ? new URL(s) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    ctx.addIssue({ code: 'custom', message: `"${s}" is not an origin: write scheme://host[:port], e.g. https://app.example.com` });
    return z.NEVER;
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    ctx.addIssue({ code: 'custom', message: `"${s}" is not an origin (a browser's Origin header has no path, query or credentials): write ${url.origin}` });
    return z.NEVER;
  }
  return url.origin;
});

/** An entry of server.allowedHosts: host names are compared in lower case (the guard lowers the header's). */
export const hostHeaderName = z.string().transform((s) => s.toLowerCase());
