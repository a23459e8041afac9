import { GATEWAY_VOICE } from './confirm-message.js';

/**
 * Characters a client renders as nothing or that only change how text reads (format, default-ignorable,
 * C1 controls, line and paragraph separators): left out before the gateway's wording is looked for, so that
 * "Switch\u200bboard asks you" is found as what the user reads.
 */
const UNSEEN = /[\u007f-\u009f\u2028\u2029\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** Text as it reads: compatibility forms folded (full-width letters), unseen characters out, spaces collapsed, one case. */
const asRead = (s: string): string => s.normalize('NFKC').replace(UNSEEN, '').replace(/\s+/gu, ' ').toLowerCase();

const VOICE = asRead(GATEWAY_VOICE);

/** How deep an elicitation's form is read (a form is flat: properties of primitive fields; deeper is no form). */
const MAX_DEPTH = 6;

function wordingIn(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'string') return asRead(value).includes(VOICE) ? path : undefined;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = wordingIn(v, Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Where an upstream's elicitation (its message, its form's titles, descriptions and choices) speaks in the
 * gateway's own voice (GATEWAY_VOICE, as it reads), if anywhere. Only the gateway's confirmation questions
 * open so: one from an upstream that does is a copy of them, made to be taken for them (and approve a
 * call, or give a secret, on the gateway's authority).
 */
export function gatewayWordingIn(params: Record<string, unknown>): string | undefined {
  return wordingIn(params.message, 'message', 0) ?? wordingIn(params.requestedSchema, 'requestedSchema', 0);
}

/** A URL's path as a server reads it: its percent-escapes decoded (one that is not UTF-8 as written). */
function pathOf(url: URL): string {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
}

const portOf = (url: URL): string => url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');

/**
 * Whether the URL an upstream's URL elicitation asks the user to open is the gateway's own (`own`: its public
 * URL): its host name, its port or a web default one (where a proxy in front redirects or serves the same
 * name), and a path under the public URL's. Only the gateway's own consent links (/oauth/start) lead a user
 * there: an upstream's that did would pass for that flow, another user's link among them (a link whose
 * account linking the user confirms goes to that other user).
 */
export function gatewayUrlIn(params: Record<string, unknown>, own: URL | undefined): boolean {
  if (own === undefined || typeof params.url !== 'string') return false;
  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    return false; // no URL a browser opens
  }
  const host = (u: URL) => u.hostname.replace(/\.$/, '');
  if (host(url) !== host(own) || ![portOf(own), '80', '443'].includes(portOf(url))) return false;
  const base = pathOf(own).replace(/\/$/, ''), path = pathOf(url);
  return base === '' || path === base || path.startsWith(`${base}/`);
}

/**
 * An upstream's elicitation as its user is shown it: its message opened by the upstream that asks
 * (`Upstream "github" asks: …`), so that no upstream's question reads as the gateway's, whose own open
 * with GATEWAY_VOICE. One without a message (or with one that is not text) says what its mode asks, so
 * marked: a URL one was shown a client's or the gateway's default alone ("Open this link to continue"),
 * a link from no one. Anything else in it is relayed as it is.
 */
export function attributedAsk(upstream: string | undefined, params: Record<string, unknown>): Record<string, unknown> {
  // Without a message (the protocol asks for one): what its mode asks, said for it.
  const said = typeof params.message === 'string' ? params.message : params.mode === 'url' ? 'Open this link to continue' : 'Answer this request';
  const who = upstream === undefined ? 'An upstream server' : `Upstream ${JSON.stringify(upstream)}`;
  return { ...params, message: `${who} asks: ${said}` };
}
