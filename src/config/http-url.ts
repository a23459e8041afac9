import { z } from 'zod';

/**
 * A URL the gateway fetches over HTTP. z.url() takes any scheme (ftp:, file:, mailto:), which passes
 * check-config and fails only when the gateway first uses it; this says at load what is wrong and why.
 * `what` names the user of the URL, e.g. "the streamable-http transport".
 */
export function httpUrl(what: string) {
  return z.string().superRefine((s, ctx) => {
    if (!URL.canParse(s)) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} is not a URL; ${what} needs an http:// or https:// URL` });
      return;
    }
    const { protocol } = new URL(s);
    if (protocol !== 'http:' && protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: `${what} cannot use ${protocol}// URLs; it needs http:// or https://` });
    }
  });
}
