import { GatewayError } from '../errors.js';
import { errorBodyDetail } from './error-body-detail.js';
import { headerValue } from './http-headers.js';
import { sentCredentials } from './sent-credentials.js';
import { discard } from './read-body.js';

type Headers = Record<string, string | string[] | undefined>;

/** What a Content-Encoding can be named as in a message: a token list; anything else is not quoted. */
const NAMEABLE = /^[a-z0-9!#$%&'*+.^_`|~, -]{1,64}$/;

/**
 * The Content-Encoding of a remote answer the gateway cannot read, or undefined (none, or identity). The
 * gateway sends no Accept-Encoding and undici decodes nothing, so any coding is one it never asked for: a
 * compressing proxy, or a server that compresses regardless.
 */
export function foreignEncoding(headers: Headers): string | undefined {
  const v = headerValue(headers, 'content-encoding')?.trim().toLowerCase();
  if (!v || v === 'identity') return undefined;
  return NAMEABLE.test(v) ? v : 'an unreadable value';
}

/**
 * An answer (`what`) sent in such a coding: its request fails naming the coding, never its bytes (read as text,
 * gzip was a "Parse error" quoting binary to the client, and counted as unreachable). Kept as it is (see sendFailure).
 */
export function encodedAnswer(upstream: string, coding: string, what = 'its answer'): GatewayError {
  const message = `upstream "${upstream}" sent ${what} with Content-Encoding: ${coding}, which the gateway did not ask for (it sends no Accept-Encoding) and does not decode; turn compression off for the gateway's requests (at the upstream, or at a proxy in front of it)`;
  return new GatewayError('SWB_UPSTREAM_PROTOCOL', message, { upstream, contentEncoding: coding });
}

/**
 * A refusal's (`res`) error body's detail for the client: its start quoted without the credentials its request
 * carried (see errorBodyDetail, keepSentCredentials) or, in a coding, only that named.
 */
export function refusalDetail(res: { headers: Headers }, text: string, configured: Record<string, string> | undefined): string {
  const coding = foreignEncoding(res.headers);
  return coding ? `a body with Content-Encoding: ${coding}, not shown` : errorBodyDetail(text, configured, sentCredentials(res));
}

/** A response whose body is in a Content-Encoding never asked for (see foreignEncoding): let go, and `what` fails naming it. */
export async function refuseEncoded(res: { headers: Headers; body: Parameters<typeof discard>[0] }, upstream: { name: string; http: { bodyTimeoutMs: number } }, what: string): Promise<void> {
  const coding = foreignEncoding(res.headers);
  if (coding === undefined) return;
  await discard(res.body, upstream.http.bodyTimeoutMs);
  throw encodedAnswer(upstream.name, coding, what);
}
