import { isLoopbackHost } from './loopback.js';

/**
 * Characters no URI holds as written (RFC 3986): controls, format characters (bidi overrides, zero-width),
 * default-ignorable ones, spaces and separators, and the backslash a WHATWG parser reads as "/". The URL
 * parser strips or maps some of them away (a tab, a zero-width space in a host), so the address a client
 * shows is not the one its browser opens: they are looked for in the string as the upstream sent it.
 */
const NOT_AS_WRITTEN = /[\p{Cc}\p{Cf}\p{Z}\p{Default_Ignorable_Code_Point}\\]/u;

/**
 * Why `url`, which an upstream asks a client to open in the user's browser (a URL-mode elicitation), is not
 * one to send a user to, or undefined when it is: an absolute https: URL (http: only to a loopback host,
 * where a local server runs), with no credentials before its host and nothing that makes it read otherwise
 * than it opens. `javascript:` and `data:` run the upstream's script in the client's (or the gateway's
 * origin's) page, `file:` opens the user's own files, a relative one resolves against whatever the client
 * is showing. The reason never quotes the URL (it is the upstream's, of any length, maybe a secret's).
 */
export function unopenableUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return 'is missing (a URL elicitation needs one)';
  if (NOT_AS_WRITTEN.test(url)) return 'holds control, invisible, space or backslash characters (it may read as another address)';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL';
  }
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) return 'is plain http: to a host other than loopback (only https: is opened elsewhere)';
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `has the scheme ${JSON.stringify(parsed.protocol.slice(0, 32))} (only https:, or http: to a loopback host, is opened)`;
  if (parsed.username !== '' || parsed.password !== '') return 'carries credentials before its host (user:password@), which make it read as another host';
  return undefined;
}
