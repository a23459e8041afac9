import { z } from 'zod';

/** A custom issue's param: the problem starts with the value as written in the file (never as interpolated). */
export const WRITTEN_VALUE = 'quoteWrittenValue';

/** The user information before a host (to its last "@"), with or without a scheme: where a URL carries a credential. */
const USERINFO = /^((?:[^/?#]*:)?\/\/|)[^/?#]*@/;

/**
 * A URL as the file wrote it, for a problem to quote, with what GET /config redacts of a URL replaced: its
 * user information and its query (https://user:TOKEN@host, ?api_key=…). It is quoted because it is no URL
 * (a typo in the port), so URL cannot take it apart; the host and path, where the typo is, stay readable.
 */
export function writtenUrlShown(written: string): string {
  return written.replace(USERINFO, '$1[redacted]@').replace(/\?[^#]*/, '?[redacted]');
}

/**
 * A URL the gateway fetches over HTTP. z.url() takes any scheme (ftp:, file:, mailto:), which passes
 * check-config and fails only when the gateway first uses it; this says at load what is wrong and why.
 * `what` names the user of the URL, e.g. "the streamable-http transport".
 */
export function httpUrl(what: string) {
  return z.string().superRefine((s, ctx) => {
    if (!URL.canParse(s)) {
      // Not the value itself: it may have come from ${VAR} and carry a credential (https://user:TOKEN@host with a
      // typo in the port). problems.ts puts the value as the file wrote it before the message (WRITTEN_VALUE).
      ctx.addIssue({ code: 'custom', message: `is not a URL; ${what} needs an http:// or https:// URL`, params: { [WRITTEN_VALUE]: true } });
      return;
    }
    const { protocol } = new URL(s);
    if (protocol !== 'http:' && protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: `${what} cannot use ${protocol}// URLs; it needs http:// or https://` });
    }
  });
}
